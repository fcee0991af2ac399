/** The series the overview's charts draw (`GET /api/history`): one value per interval between two readings. */
export interface OverviewHistory {
  /** End of each interval (ms since the epoch). */
  readonly at: readonly number[];
  /** Pages finished per second over each interval. */
  readonly pagesPerSecond: readonly number[];
  /** Pages per second by status class (`2xx`, `4xx`...) over each interval: the status mix. */
  readonly statuses: Readonly<Record<string, readonly number[]>>;
  /**
   * The busiest groups (at most {@link CHARTED_GROUPS}): `admitted` is the
   * group's pace (requests let start per second), `deferred` its waits
   * (requests held back by its limits or a pause, per second); `null` where
   * the group was not among the busiest at both ends of the interval.
   */
  readonly groups: readonly { readonly group: string; readonly admitted: readonly (number | null)[]; readonly deferred: readonly (number | null)[] }[];
}

/** Groups the charts follow: a crawl may have thousands, a chart shows a handful. */
export const CHARTED_GROUPS = 8;
/** Readings kept: half an hour at the overview's 5 s refresh. */
export const HISTORY_SAMPLES = 360;
/** Readings closer than this to the previous one are not kept: a rate over a few ms says little. */
export const MIN_SAMPLE_SPACING_MS = 1_000;

/** What the history keeps of an overview reading (a `CrawlOverview` is one). */
export interface HistoryReading {
  readonly at: number;
  readonly status: { readonly pages: number; readonly byStatus: Readonly<Record<string, number>> };
  readonly groups: { readonly groups: readonly { readonly group: string; readonly admitted: number; readonly deferred: number }[] };
}

interface GroupCounts {
  readonly admitted: number;
  readonly deferred: number;
}

interface Sample {
  readonly at: number;
  readonly pages: number;
  readonly byStatus: Readonly<Record<string, number>>;
  /** Counters of the groups that were the busiest at this reading. */
  readonly groups: ReadonlyMap<string, GroupCounts>;
}

/** Per second, to two decimals; a counter that went back (a limiter reset) reads 0, not a negative rate. */
const perSecond = (delta: number, seconds: number): number => Math.round((Math.max(0, delta) / seconds) * 100) / 100;

/**
 * The overview's readings over time, in this dashboard's memory: each
 * reading's cumulative counters (pages, pages by status, each busy group's
 * admissions and deferrals), turned into per-second series on request.
 */
export class OverviewHistoryBook {
  #samples: Sample[] = [];
  /** Every group's counters at the last reading, to find the busiest since. */
  #lastCounts = new Map<string, GroupCounts>();

  add(overview: HistoryReading): void {
    const last = this.#samples.at(-1);
    if (last !== undefined && overview.at - last.at < MIN_SAMPLE_SPACING_MS) return;
    // The counter went back: the namespace was cleared, earlier readings belong to another crawl.
    if (last !== undefined && overview.status.pages < last.pages) this.#samples = [];
    const counts = new Map(overview.groups.groups.map((group) => [group.group, { admitted: group.admitted, deferred: group.deferred }]));
    const activity = (group: string, now: GroupCounts): number => {
      const before = this.#lastCounts.get(group);
      return now.admitted - (before?.admitted ?? 0) + now.deferred - (before?.deferred ?? 0);
    };
    const busiest = [...counts]
      .map(([group, now]) => ({ group, now, recent: activity(group, now), total: now.admitted + now.deferred }))
      .filter((entry) => entry.total > 0)
      .sort((a, b) => b.recent - a.recent || b.total - a.total || a.group.localeCompare(b.group))
      .slice(0, CHARTED_GROUPS);
    this.#lastCounts = counts;
    this.#samples.push({
      at: overview.at,
      pages: overview.status.pages,
      byStatus: { ...overview.status.byStatus },
      groups: new Map(busiest.map((entry) => [entry.group, entry.now])),
    });
    if (this.#samples.length > HISTORY_SAMPLES) this.#samples.shift();
  }

  series(): OverviewHistory {
    const samples = this.#samples;
    const at: number[] = [];
    const pagesPerSecond: number[] = [];
    const statusKeys = [...new Set(samples.flatMap((sample) => Object.keys(sample.byStatus)))].sort();
    const statuses: Record<string, number[]> = Object.fromEntries(statusKeys.map((key) => [key, []]));
    const groupNames = new Map<string, number>();
    for (const sample of samples) for (const [group, counts] of sample.groups) groupNames.set(group, Math.max(groupNames.get(group) ?? 0, counts.admitted + counts.deferred));
    const charted = [...groupNames].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, CHARTED_GROUPS).map(([group]) => group);
    const groups = charted.map((group) => ({ group, admitted: [] as (number | null)[], deferred: [] as (number | null)[] }));
    for (let index = 1; index < samples.length; index += 1) {
      const before = samples[index - 1];
      const now = samples[index];
      if (before === undefined || now === undefined) continue;
      const seconds = (now.at - before.at) / 1000;
      at.push(now.at);
      pagesPerSecond.push(perSecond(now.pages - before.pages, seconds));
      for (const key of statusKeys) statuses[key]?.push(perSecond((now.byStatus[key] ?? 0) - (before.byStatus[key] ?? 0), seconds));
      for (const series of groups) {
        const from = before.groups.get(series.group);
        const to = now.groups.get(series.group);
        series.admitted.push(from && to ? perSecond(to.admitted - from.admitted, seconds) : null);
        series.deferred.push(from && to ? perSecond(to.deferred - from.deferred, seconds) : null);
      }
    }
    return { at, pagesPerSecond, statuses, groups };
  }
}
