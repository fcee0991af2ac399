import type { DeadLetterEntry, DeadLetterAdmin, DeadLetterStats } from '@crawlq/dead-letter';
import type { CrawlJobPolicy, CrawlQueue } from '@crawlq/queue';
import { describeFilter, groupMatches, type EntryFilter, type ListQuery } from './filters.js';
import { publicEntry } from './public-entry.js';
import { isAll, type Selection } from './selection.js';

/**
 * What the pages and the JSON API do with the dead-letter queue: one place
 * for the selection rules, the log lines, and the redaction of what is shown
 * (`list` and `show` return `publicEntry`s; retry reads the stored job).
 */
export interface DeadLetterActions {
  list(query: ListQuery): Promise<DeadLetterEntry[]>;
  show(id: string): Promise<DeadLetterEntry | null>;
  stats(): Promise<DeadLetterStats>;
  /** Puts one entry back into the crawl queue; 0 when there is no such entry. */
  retryOne(id: string): Promise<number>;
  retry(selection: Selection): Promise<number>;
  purgeOne(id: string): Promise<number>;
  purge(selection: Selection): Promise<number>;
}

export interface DeadLetterActionsOptions {
  readonly deadLetters: DeadLetterAdmin;
  /**
   * Where a retried job of a group goes back: its shard's crawl queue. Asked
   * once per retry action, so a crawl's shard layout recorded after the
   * dashboard started is followed.
   */
  readonly crawlQueueOf: () => Promise<(group: string) => CrawlQueue>;
  readonly jobPolicy: CrawlJobPolicy;
  readonly log: (line: string) => void;
}

export function createDeadLetterActions(options: DeadLetterActionsOptions): DeadLetterActions {
  const { deadLetters, crawlQueueOf, jobPolicy, log } = options;

  /** The stored groups a group filter picks (see `groupMatches`); `undefined` without a group filter. */
  async function groupsPicked(group: string | undefined): Promise<string[] | undefined> {
    if (group === undefined) return undefined;
    const stored = Object.keys((await deadLetters.stats()).byGroup);
    return stored.filter((name) => groupMatches(group, name));
  }

  /** The filter picks that one stored group and no other: `DeadLetterAdmin` can select it by name. */
  async function picksOnly(group: string): Promise<boolean> {
    const groups = (await groupsPicked(group)) ?? [];
    return groups.length === 1 && groups[0] === group;
  }

  /** Entries a filter picks, newest first, paged. `DeadLetterAdmin` filters by one exact group only. */
  async function entriesMatching(filter: EntryFilter, page: { limit: number; offset?: number }): Promise<DeadLetterEntry[]> {
    const groups = await groupsPicked(filter.group);
    const reason = filter.reason === undefined ? {} : { reason: filter.reason };
    if (groups === undefined || groups.length <= 1) {
      const group = groups?.[0] ?? filter.group;
      return deadLetters.list({ ...reason, ...(group === undefined ? {} : { group }), ...page });
    }
    // One host on several ports: read the reason's entries and keep those groups'.
    const offset = page.offset ?? 0;
    const entries = (await deadLetters.list({ ...reason, limit: Number.MAX_SAFE_INTEGER })).filter((entry) => groups.includes(entry.group));
    return entries.slice(offset, offset + page.limit);
  }

  /** Ids matching a filter: `DeadLetterAdmin` selects by one exact group or all only. */
  async function idsMatching(filter: EntryFilter): Promise<string[]> {
    const entries = await entriesMatching(filter, { limit: Number.MAX_SAFE_INTEGER });
    return entries.map((entry) => entry.id);
  }

  function describe(selection: Selection): string {
    return isAll(selection) ? 'all' : describeFilter(selection);
  }

  return {
    async list(query) {
      return (await entriesMatching(query, { limit: query.limit, offset: query.offset })).map(publicEntry);
    },
    async show(id) {
      const entry = await deadLetters.show(id);
      return entry === null ? null : publicEntry(entry);
    },
    stats: () => deadLetters.stats(),

    async retryOne(id) {
      const { retried } = await deadLetters.retry({ ids: [id] }, await crawlQueueOf(), jobPolicy);
      if (retried > 0) log(`dashboard: retried dead letter ${id}`);
      return retried;
    },

    async retry(selection) {
      const { retried } = await deadLetters.retry(
        isAll(selection)
          ? { all: true }
          : selection.reason === undefined && selection.group !== undefined && (await picksOnly(selection.group))
            ? { group: selection.group }
            : { ids: await idsMatching(selection) },
        await crawlQueueOf(),
        jobPolicy,
      );
      log(`dashboard: retried ${retried} dead letters (${describe(selection)})`);
      return retried;
    },

    async purgeOne(id) {
      const { purged } = await deadLetters.purge({ ids: [id] });
      if (purged > 0) log(`dashboard: purged dead letter ${id}`);
      return purged;
    },

    async purge(selection) {
      const { purged } = await deadLetters.purge(isAll(selection) ? { all: true } : { ids: await idsMatching(selection) });
      log(`dashboard: purged ${purged} dead letters (${describe(selection)})`);
      return purged;
    },
  };
}
