export {
  createDeadLetters,
  DEAD_LETTER_JOB_NAME,
  type DeadLetters,
  type CreateDeadLettersOptions,
  type RecordInput,
  type FailedCrawlJob,
  type CrawlQueueLike,
} from './dead-letters.js';
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
export {
  createAlerts,
  DIGEST_JOB_NAME,
  type Alerts,
  type CreateAlertsOptions,
  type FlushResult,
  type DigestJobData,
  type DigestJobResult,
} from './alerts.js';
export {
  DEFAULT_FIRST_DELAY_MS,
  DEFAULT_WINDOW_MS,
  DEFAULT_DELIVERY_POLICY,
  type AlertMailConfig,
  type AlertDeliveryPolicy,
} from './alert-config.js';
export { MAX_DIGEST_EXAMPLES, type Digest, type DigestExample } from './digest.js';
export { renderDigestEmail, escapeHtml, MAX_DIGEST_ROWS, type DigestEmail, type DigestEmailOptions } from './digest-email.js';
export { DeadLetterInputError, AlertDeliveryError, AlertConfigError } from './errors.js';
