import type { Job, JobsOptions } from 'bullmq';
import type { CRAWL_JOB_NAME, CrawlJobData } from '@crawlq/queue';

/** What recording needs from a crawl job: a BullMQ `Job<CrawlJobData>` fits. */
export type FailedCrawlJob = Pick<Job<CrawlJobData>, 'id' | 'data' | 'opts' | 'attemptsMade' | 'finishedOn' | 'failedReason' | 'stacktrace' | 'remove'>;

/** What `reconcile()` and `retry()` need from the crawl queue: `openCrawlQueue()`'s queue fits. */
export interface CrawlQueueLike {
  getFailed(start?: number, end?: number): Promise<(FailedCrawlJob | undefined)[]>;
  getJob(jobId: string): Promise<(FailedCrawlJob & Pick<Job<CrawlJobData>, 'getState'>) | undefined>;
  add(name: typeof CRAWL_JOB_NAME, data: CrawlJobData, opts?: JobsOptions): Promise<unknown>;
}

/** The crawl queue a job of `group` belongs in: a crawl of several shards has a queue per shard. */
export type CrawlQueueOfGroup = (group: string) => CrawlQueueLike;
