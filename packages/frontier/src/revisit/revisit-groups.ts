import type { RedisClient } from '@crawlq/redis';
import { revisitKeys } from './revisit-keys.js';
import { REVISIT_EPOCH_MS, type RevisitCounters } from './revisit-store.js';

/** The per-group counters the record script keeps (see `R g:<counter>` in `revisit.lua`). */
const GROUP_COUNTERS = ['known', 'first', 'changed', 'unchanged', 'notModified', 'gone', 'bytesSaved', 'retired'] as const;
/** Wheel entries read per LRANGE while counting due URLs per group. */
const SCAN_CHUNK = 2_000;
/** The horizon of "due in the next hour". */
const HOUR_MS = 3_600_000;

/**
 * One group's revisit figures (see readRevisitGroups): the fleet's counters
 * kept per group (those that are not the fleet's alone), and its due counts.
 */
export interface RevisitGroupFigures extends Pick<RevisitCounters, 'known' | 'first' | 'changed' | 'unchanged' | 'notModified' | 'gone' | 'bytesSaved' | 'retired'> {
  readonly group: string;
  /** Schedule entries of the group due now (as the fleet's dueNow: an upper bound); undefined when not counted. */
  readonly dueNow: number | undefined;
  /** The same within the next hour, due now included; undefined when not counted. */
  readonly dueNextHour: number | undefined;
}

export interface RevisitGroupsRead {
  /** Groups with any figure, by name. */
  readonly groups: readonly RevisitGroupFigures[];
  /**
   * The due counts are complete: every schedule entry due within the hour
   * was read. False when the scan stopped at `maxDueEntries` (the groups'
   * due counts are then lower bounds) or was not asked for.
   */
  readonly dueComplete: boolean;
}

export interface ReadRevisitGroupsOptions {
  readonly now?: number;
  /**
   * Counts each group's due URLs: the schedule keeps them by due time, not
   * by group, so this reads the wheel entries due within the hour (each
   * names its URL) and groups them by this function (the frontier's
   * `groupOf`). Absent: due counts are left undefined and nothing is scanned.
   */
  readonly groupOf?: ((url: string) => string) | undefined;
  /**
   * Most wheel entries the due scan reads, over all shards (a crawl with
   * millions of URLs due within the hour is cut short: see `dueComplete`).
   * @default 200000
   */
  readonly maxDueEntries?: number;
}

/**
 * Every group's revisit figures across a crawl's shards (`shards`: its shard
 * keyspaces). The counters cost one HGETALL per counter and shard; the due
 * counts, when asked for, one pass over the entries due within the hour in
 * batches of SCAN_CHUNK (a group's URLs are all in its shard).
 */
export async function readRevisitGroups(redis: RedisClient, shards: readonly string[], options: ReadRevisitGroupsOptions = {}): Promise<RevisitGroupsRead> {
  const now = options.now ?? Date.now();
  const figures = new Map<string, Record<(typeof GROUP_COUNTERS)[number], number> & { dueNow: number; dueNextHour: number }>();
  const entry = (group: string) => {
    let found = figures.get(group);
    if (found === undefined) {
      found = { known: 0, first: 0, changed: 0, unchanged: 0, notModified: 0, gone: 0, bytesSaved: 0, retired: 0, dueNow: 0, dueNextHour: 0 };
      figures.set(group, found);
    }
    return found;
  };
  await Promise.all(
    shards.map(async (namespace) => {
      const keys = revisitKeys(namespace);
      const all = await Promise.all(GROUP_COUNTERS.map((counter) => redis.hgetall(keys.groupCounter(counter))));
      GROUP_COUNTERS.forEach((counter, i) => {
        for (const [group, value] of Object.entries(all[i] ?? {})) entry(group)[counter] += Number(value);
      });
    }),
  );
  let dueComplete = false;
  if (options.groupOf !== undefined) {
    const groupOf = options.groupOf;
    let budget = options.maxDueEntries ?? 200_000;
    dueComplete = true;
    const nowDs = Math.ceil((now - REVISIT_EPOCH_MS) / 100);
    const horizonDs = Math.ceil((now + HOUR_MS - REVISIT_EPOCH_MS) / 100);
    for (const namespace of shards) {
      const keys = revisitKeys(namespace);
      const slots = await redis.zrangebyscore(keys.slots, '-inf', horizonDs, 'WITHSCORES');
      for (let i = 0; i + 1 < slots.length && dueComplete; i += 2) {
        const dueNow = Number(slots[i + 1]) <= nowDs;
        for (let at = 0; ; at += SCAN_CHUNK) {
          const take = Math.min(SCAN_CHUNK, budget);
          if (take <= 0) {
            dueComplete = false;
            break;
          }
          const entries = await redis.lrangeBuffer(`${keys.prefix}w:${slots[i] ?? ''}`, at, at + take - 1);
          budget -= entries.length;
          for (const raw of entries) {
            // An entry is a 2-byte generation, then the URL.
            const group = entry(groupOf(raw.subarray(2).toString()));
            group.dueNextHour += 1;
            if (dueNow) group.dueNow += 1;
          }
          if (entries.length < take) break;
        }
      }
    }
  }
  const scanned = options.groupOf !== undefined;
  return {
    groups: [...figures]
      .map(([group, f]) => ({ group, ...f, dueNow: scanned ? f.dueNow : undefined, dueNextHour: scanned ? f.dueNextHour : undefined }))
      .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0)),
    dueComplete,
  };
}

/**
 * The `count` groups with the most known URLs and their counters (no due
 * counts), for gauges read at every scrape: one HGETALL of the known counter
 * per shard, then one HMGET per other counter and shard for those groups only.
 */
export async function readTopRevisitGroups(redis: RedisClient, shards: readonly string[], count: number): Promise<RevisitGroupFigures[]> {
  const known = new Map<string, number>();
  const perShard = await Promise.all(shards.map((namespace) => redis.hgetall(revisitKeys(namespace).groupCounter('known'))));
  for (const fields of perShard) for (const [group, value] of Object.entries(fields)) known.set(group, (known.get(group) ?? 0) + Number(value));
  const top = [...known]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, Math.max(0, count))
    .map(([group]) => group);
  if (top.length === 0) return [];
  const figures = top.map((group) => ({ group, known: 0, first: 0, changed: 0, unchanged: 0, notModified: 0, gone: 0, bytesSaved: 0, retired: 0 }));
  await Promise.all(
    shards.map(async (namespace) => {
      const keys = revisitKeys(namespace);
      const all = await Promise.all(GROUP_COUNTERS.map((counter) => redis.hmget(keys.groupCounter(counter), ...top)));
      GROUP_COUNTERS.forEach((counter, i) => {
        figures.forEach((figure, j) => {
          figure[counter] += Number(all[i]?.[j] ?? 0);
        });
      });
    }),
  );
  return figures.map((figure) => ({ ...figure, dueNow: undefined, dueNextHour: undefined }));
}
