import { readCrawlProgress, readRevisitProgress, readShardNamespaces, type CrawlProgress, type RevisitProgress } from '@crawlq/frontier';
import { readCrawlStats, type CrawlStats } from './crawl-stats.js';
import type { FleetAdminServices } from '../crawl-services.js';
import { readGroupWaits, type GroupWait } from './group-waits.js';

/** What `crawlq status` reports. */
export interface CrawlStatus extends CrawlProgress {
  readonly deadLettered: number;
  readonly pages: number;
  readonly byStatus: CrawlStats['byStatus'];
  readonly skipped: CrawlStats['skipped'];
  /** Groups held back by a pause or an unreachable robots.txt, and why. */
  readonly groupWaits: readonly GroupWait[];
  /**
   * Nothing left to crawl: no URL in a backlog, no job waiting, delayed or
   * running, and no known URL on a revisit schedule (a continuous crawl is
   * never done: its known URLs come due again).
   */
  readonly done: boolean;
  /** The continuous crawl's schedule and revisit counters (all zero without --revisit). */
  readonly revisits: RevisitProgress;
}

export async function readCrawlStatus(services: FleetAdminServices, deadLettered: () => Promise<number>): Promise<CrawlStatus> {
  const shards = await readShardNamespaces(services.redis, services.config.namespace);
  const [counts, stats, dead, groupWaits, revisits] = await Promise.all([
    readCrawlProgress(services.redis, services.config.namespace, { shards }),
    readCrawlStats(services.redis, services.config.namespace),
    deadLettered(),
    readGroupWaits(services.redis, services.config.namespace),
    readRevisitProgress(services.redis, shards),
  ]);
  const left = counts.backlog + counts.waiting + counts.delayed + counts.active;
  return {
    ...counts,
    deadLettered: dead,
    pages: stats.pages,
    byStatus: stats.byStatus,
    skipped: stats.skipped,
    // Once nothing is left, nothing waits: a record lingering past its end says nothing.
    groupWaits: left === 0 ? [] : groupWaits,
    done: left === 0 && revisits.known === 0,
    revisits,
  };
}

/** Bytes for people (B, KiB, MiB, GiB, TiB), as `status` and the dashboard show a crawl's byte figures. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
