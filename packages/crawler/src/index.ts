export {
  startCrawlWorker,
  runWorkerUntilSignalled,
  alertMailConfig,
  CRAWL_FINISHED_MESSAGE,
  type CrawlWorker,
  type CrawlWorkerOptions,
  type WorkerTelemetry,
  type LogSeverity,
} from './crawl-worker.js';
export { runCrawl, type RunCrawlOptions, type CrawlSummary } from './run-crawl.js';
export { openCrawlServices, publishLimitPolicy, frontierSettingsFrom, type CrawlServices, type CrawlServiceOptions } from './crawl-services.js';
export { readCrawlStatus, type CrawlStatus } from './crawl-status.js';
export { readCrawlStats, CrawlStatsRecorder, type CrawlStats } from './crawl-stats.js';
export { clearNamespace } from './namespace-state.js';
export { limitPolicyFrom } from './limit-policy.js';
export { fetcherOptionsFrom } from './fetcher-options.js';
export { processCrawlJob, type CrawlJobContext } from './process-crawl-job.js';
export { DeferJobError, BlockedGroupError, PermanentJobError } from './crawl-errors.js';
export type { PageRecord, SkippedRecord } from './page-record.js';
export { resumeGroup } from './group-admin.js';
export { seedFromSitemaps, sitemapsFromRobots, type SitemapSeedingResult } from './sitemap-seeding.js';
