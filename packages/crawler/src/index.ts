// What fetches pages (the worker, the one-machine crawl, the job processor) is
// in fetching.ts, `@crawlq/crawler/fetching`: loading this entry stays cheap.
export { openCrawlServices, frontierSettingsFrom, type CrawlServices, type CrawlServiceOptions, type FleetAdminServices } from './runtime/crawl-services.js';
export {
  publishCrawlDefinition,
  joinCrawlDefinition,
  refreshCrawlDefinition,
  definitionAuthor,
  readFleetConfig,
  retryJobPolicyFor,
  openDeadLetterRetry,
  type DeadLetterRetryTarget,
  type PublishedDefinition,
} from './runtime/fleet-definition.js';
export { DefinitionStore } from './runtime/definition-store.js';
export { readCrawlStatus, formatBytes, type CrawlStatus } from './runtime/crawl-status.js';
export { readCrawlStats, CrawlStatsRecorder, type CrawlStats } from './crawl-stats.js';
export { clearNamespace } from './runtime/namespace-state.js';
export { limitPolicyFrom } from './runtime/limit-policy.js';
export { jobPolicyFrom } from './runtime/job-policy.js';
export { fetcherOptionsFrom } from './runtime/fetcher-from-config.js';
export { describeResults, resultsTargetOf } from './runtime/results-target.js';
export {
  BlockedGroupError,
  CrawlerMismatchError,
  CrawlStoppedWithoutRedisError,
  DeferJobError,
  DefinitionConflictError,
  JobLostError,
  PermanentJobError,
  RobotsUnreachableError,
  WorkerStoppingError,
} from './errors.js';
export { GroupWaits, readGroupWaits, describeGroupWaits, describeGroupWait, type GroupWait, type WaitCause } from './group-waits.js';
export type { PageRecord, SkippedRecord } from './page-record.js';
export type { RenderSummary } from './page-render.js';
// Types the public API's signatures name (createCrawl's enqueue and status, the page record's render log, the options):
// re-exported here so that the public package's hand-picked list can name them.
export type { AddResult, RejectedUrl, CrawlProgress } from '@crawlq/frontier';
export type { CrawlCounts } from '@crawlq/queue';
export type { RenderedRequest, RequestFate } from '@crawlq/renderer';
export type { CrawlqConfig, OptionName } from '@crawlq/config';
export {
  resumeGroup,
  pauseGroup,
  listGroups,
  openFleetAdmin,
  type FleetAdmin,
  type GroupList,
  type GroupOverview,
} from './admin/group-admin.js';
export { listServers, serversOfGroups, type ServerOverview } from './admin/server-admin.js';
export { Seeding } from './runtime/seeding.js';
export type { SeedingOptions, SitemapSeedingResult } from './runtime/sitemap-seeding.js';
// The crawler API: what a user's --crawler module imports (the public `crawlq` package re-exports it),
// listed once in api.ts. Inside crawlq, createCrawl is the eager one (api.ts's loads it on first call).
export * from './api.js';
export { createCrawl } from './handlers/create-crawl.js';
export { nextSchedule, optimalIntervalMs, estimatedRate, type RevisitPolicy, type ChangeHistory } from './revisit/revisit-interval.js';
