import { crawlCounts, type CrawlCounts } from '@crawlq/queue';
import type { CrawlServices } from './crawl-services.js';
import { readCrawlStats, type CrawlStats } from './crawl-stats.js';

/** What `crawlq status` reports. */
export interface CrawlStatus extends CrawlCounts {
  readonly deadLettered: number;
  readonly pages: number;
  readonly byStatus: CrawlStats['byStatus'];
  readonly skipped: CrawlStats['skipped'];
  /** Nothing left to crawl: no job waiting, delayed or running. */
  readonly done: boolean;
}

export async function readCrawlStatus(services: CrawlServices, deadLettered: () => Promise<number>): Promise<CrawlStatus> {
  const [counts, stats, dead] = await Promise.all([
    crawlCounts(services.queue),
    readCrawlStats(services.redis, services.config.namespace),
    deadLettered(),
  ]);
  return {
    ...counts,
    deadLettered: dead,
    pages: stats.pages,
    byStatus: stats.byStatus,
    skipped: stats.skipped,
    done: counts.waiting + counts.delayed + counts.active === 0,
  };
}
