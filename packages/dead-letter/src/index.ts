export {
  createDeadLetterRecorder,
  type DeadLetterRecorder,
  type CreateDeadLetterRecorderOptions,
  type RecordInput,
} from './dead-letter-recorder.js';
export { createDeadLetterAdmin, type DeadLetterAdmin, type CreateDeadLetterAdminOptions } from './dead-letter-admin.js';
export { DEAD_LETTER_JOB_NAME } from './dead-letter-store.js';
export type { FailedCrawlJob, CrawlQueueLike, CrawlQueueOfGroup } from './crawl-job.js';
export {
  isDeadLetterEntry,
  type DeadLetterEntry,
  type DeadLetterFilter,
  type DeadLetterRetention,
  type DeadLetterStats,
  type RetrySelector,
  type PurgeSelector,
  type AlertScheduler,
} from './dead-letter-entry.js';
export { classifyFailure, classifyFailureMessage, MAX_MESSAGE_LENGTH, type FailureClassification } from './classify-failure.js';
export { isFinalFailure } from './final-failure.js';
export { CSV_COLUMNS, csvField, type ExportFormat } from './export-format.js';
export { DeadLetterInputError } from './errors.js';
