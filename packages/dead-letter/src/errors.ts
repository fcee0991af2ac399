/**
 * A dead-letter operation was called with input it cannot use (a job without
 * an id, an unreadable export format, ...). Not retryable: fix the call.
 */
export class DeadLetterInputError extends Error {
  override readonly name = 'DeadLetterInputError';
  readonly retryable = false;
}
