export { Frontier, type FrontierShard, type FrontierOptions, type FrontierSettings, type AddResult, type DiscoveredResult, type RejectedUrl } from './frontier.js';
export { RELEASE_WINDOW_MS, DUE_WINDOW_MS, readBacklogSize, readBacklogEntries, readCrawlProgress, type CrawlProgress, type BacklogEntry, type BacklogPacer, type ReleaseOptions, type ReleaseResult, type RequeueRequest, type ContinueRequest } from './backlog.js';
export { enqueueLines, type EnqueueStreamOptions } from './enqueue-stream.js';
export { addEnqueueCounts, emptyEnqueueCounts, type EnqueueCounts, type EnqueueTotals } from './enqueue-totals.js';
export { frontierKeys } from './keys.js';
export { SeenSet, type SeenSetOptions, type SeenSetCandidate, type SeenSetInfo, type PageBudgets } from './seen-set.js';
export {
  bloomGeometry,
  bloomFalsePositiveRate,
  DEFAULT_SEEN_SET_MODE,
  MAX_BLOOM_PART_BITS,
  BLOOM_BLOCK_BITS,
  type BloomGeometry,
  type SeenSetMode,
} from './seen-set-mode.js';
export { ReserveCode } from './lua/seen-script-status.js';
export { FrontierError, FrontierArgumentError, SeenSetMismatchError } from './errors.js';
export { recordShardCount, readShardNamespaces } from './shard-layout.js';
export { RevisitSchedule, type KnownUrl } from './revisit/revisit-schedule.js';
export { RevisitStore, readRevisitProgress, type RevisitProgress, REVISIT_EPOCH_MS, MAX_STORED_ETAG, revisitBuckets, emptyRevisitCounters, type ChangeEstimate, type RevisitState, type RevisitRecord, type RevisitCounters, type RevisitHint, type RevisitLookup } from './revisit/revisit-store.js';
export { revisitKeys } from './revisit/revisit-keys.js';
export { readRevisitGroups, readTopRevisitGroups, type RevisitGroupFigures, type RevisitGroupsRead, type ReadRevisitGroupsOptions } from './revisit/revisit-groups.js';
