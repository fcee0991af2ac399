import type { DeadLetterAdmin } from '@crawlq/dead-letter';
import { listGroupRevisits, listGroups, pauseGroup, readCrawlStatus, resumeGroup, type CrawlStatus, type FleetAdmin, type GroupList } from '@crawlq/crawl-control';
import type { RevisitGroupsRead } from '@crawlq/frontier';
import { GroupNameError } from './errors.js';
import { OverviewHistoryBook, type OverviewHistory } from './overview-history.js';
import { PageRate, type PageRateReading } from './page-rate.js';

/** What the overview page and `GET /api/overview` show. */
export interface CrawlOverview {
  /** When it was read (ms since the epoch). */
  readonly at: number;
  /** Queue counts, pages, statuses and waits, as `crawlq status` reads them. */
  readonly status: CrawlStatus;
  /** Pages per second recently; `null` until the dashboard has two readings a second apart. */
  readonly rate: PageRateReading | null;
  /** The groups as `crawlq group list` shows them. */
  readonly groups: GroupList;
  /** Each group's continuous crawl figures, as `crawlq group list --revisits` shows them (no groups without --revisit). */
  readonly revisitGroups: RevisitGroupsRead;
}

/** Longest pause the dashboard asks for (the fleet's policy may cap it lower). */
export const MAX_PAUSE_MS = 24 * 3_600_000;

export interface CrawlOverviews {
  /** Reads the crawl now; the reading is also kept for the charts (see {@link OverviewHistoryBook}). */
  read(): Promise<CrawlOverview>;
  /** The charts' series from the readings so far. */
  history(): OverviewHistory;
  pause(group: string, forMs: number): Promise<void>;
  /** Returns how many deferred jobs were woken. */
  resume(group: string): Promise<number>;
}

function checkGroup(group: string): void {
  if (group === '' || group.length > 500) throw new GroupNameError('group: expected a group name (1 to 500 characters)');
}

/** Reads and steers the crawl through `@crawlq/crawl-control`'s status and group admin. */
export function createCrawlOverviews(options: { admin: FleetAdmin; deadLetters: DeadLetterAdmin; log: (line: string) => void }): CrawlOverviews {
  const { admin, deadLetters, log } = options;
  const rate = new PageRate();
  const history = new OverviewHistoryBook();
  return {
    async read() {
      await admin.followLayout();
      const [status, groups, revisitGroups] = await Promise.all([readCrawlStatus(admin, () => deadLetters.count()), listGroups(admin), listGroupRevisits(admin)]);
      const at = Date.now();
      rate.add(at, status.pages);
      const overview = { at, status, rate: rate.reading(), groups, revisitGroups };
      history.add(overview);
      return overview;
    },
    history: () => history.series(),
    async pause(group, forMs) {
      checkGroup(group);
      await admin.followLayout();
      await pauseGroup(admin, group, forMs);
      log(`dashboard: paused group ${group} for ${Math.round(forMs / 1000)} s`);
    },
    async resume(group) {
      checkGroup(group);
      await admin.followLayout();
      const woken = await resumeGroup(admin, group);
      log(`dashboard: resumed group ${group} (${woken} deferred jobs woken)`);
      return woken;
    },
  };
}
