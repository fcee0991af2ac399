// `@crawlq/crawler`: the worker side of crawlq, what fetches pages. The
// crawl's state in Redis (definition, status, administration) is
// `@crawlq/crawl-control`, for the commands that load none of this.
export {
  startCrawlWorker,
  runWorkerUntilStopped,
  alertMailConfig,
  type CrawlWorker,
  type CrawlWorkerOptions,
  type WorkerEnd,
  type WorkerTelemetry,
  type LogSeverity,
} from './worker/crawl-worker.js';
export { runWorkerProcess, type WorkerProcessOptions, type WorkerProcessEnd } from './worker/worker-process.js';
export { stopOnSignals } from './worker/stopping.js';
export { joinCoordinator, type CoordinatorLink } from './coordination/worker-link.js';
export { runCrawl, type RunCrawlOptions, type CrawlSummary } from './coordination/run-crawl.js';
export { processCrawlJob, type CrawlJobContext } from './process-crawl-job.js';
export { preloadCrawler } from './handlers/load-crawler.js';
export {
  BlockedGroupError,
  CrawlerMismatchError,
  CrawlStoppedWithoutRedisError,
  DeferJobError,
  JobLostError,
  PermanentJobError,
  RobotsUnreachableError,
  WorkerStoppingError,
} from './errors.js';
export { nextSchedule, optimalIntervalMs, estimatedRate, type RevisitPolicy, type ChangeHistory } from './revisit/revisit-interval.js';
// The crawler API: what a user's --crawler module imports (the public `crawlq` package re-exports it),
// listed once in api.ts. Inside crawlq, createCrawl is the eager one (api.ts's loads it on first call).
export * from './api.js';
export { createCrawl } from './handlers/create-crawl.js';
// Types the crawler API's signatures name (createCrawl's enqueue and status, the page record and its render log, the options):
// re-exported here so that the public package's hand-picked list can name them.
export type { PageRecord, SkippedRecord, RenderSummary, CrawlStatus, GroupWait, WaitCause } from '@crawlq/crawl-control';
export type { AddResult, RejectedUrl, CrawlProgress } from '@crawlq/frontier';
export type { CrawlCounts } from '@crawlq/queue';
export type { RenderedRequest, RequestFate } from '@crawlq/renderer';
export type { CrawlqConfig, OptionName } from '@crawlq/config';
