// `@crawlq/crawl-control`: a crawl's state in Redis, for every process that
// reads or changes it without fetching a page (the CLI's admin commands, the
// dashboard) and for the workers, which build on it (`@crawlq/crawler`).
export { openCrawlServices, frontierSettingsFrom, crawlSlotKeys, type CrawlServices, type CrawlServiceOptions, type FleetAdminServices } from './crawl-services.js';
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
} from './fleet-definition.js';
export { DefinitionStore, stampOfDefinition } from './definition-store.js';
export { DefinitionConflictError } from './errors.js';
export { clearNamespace } from './namespace-state.js';
export { Seeding, type SeedingOptions, type SitemapReader, type SitemapSeedingResult } from './seeding.js';
export type { PageRecord, SkippedRecord, RenderSummary } from './page-record.js';
// Settings read from the configuration, for the parts that apply them.
export { limitPolicyFrom } from './settings/limit-policy.js';
export { jobPolicyFrom } from './settings/job-policy.js';
export { fetcherOptionsFrom } from './settings/fetcher-from-config.js';
export { describeResults, resultsTargetOf } from './settings/results-target.js';
// What the fleet is doing.
export { readCrawlStatus, formatBytes, type CrawlStatus } from './status/crawl-status.js';
export { readCrawlStats, CrawlStatsRecorder, type CrawlStats } from './status/crawl-stats.js';
export { GroupWaits, readGroupWaits, describeGroupWaits, describeGroupWait, type GroupWait, type WaitCause } from './status/group-waits.js';
// Fleet administration: groups and servers.
export { resumeGroup, pauseGroup, listGroups, openFleetAdmin, type FleetAdmin, type GroupList, type GroupOverview } from './admin/group-admin.js';
export { listServers, serversOfGroups, resolvedHostsKey, type ServerOverview } from './admin/server-admin.js';
export { listGroupRevisits } from './admin/group-revisits.js';
