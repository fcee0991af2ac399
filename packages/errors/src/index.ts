export { CrawlqError, type CrawlqErrorOptions } from './crawlq-error.js';
export {
  FAILURE_REASONS,
  failureReasonInMessage,
  failureReasonOfCode,
  httpFailureReason,
  isFailureReason,
  messageWithReason,
  statusOfFailureReason,
  type FailureReason,
  type NamedFailureReason,
} from './failure-reason.js';
