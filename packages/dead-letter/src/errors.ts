import { CrawlqError } from '@crawlq/errors';

/**
 * A dead-letter operation was called with input it cannot use (a job without
 * an id, an unreadable export format, ...). Not retryable: fix the call.
 */
export class DeadLetterInputError extends CrawlqError {
  override readonly name = 'DeadLetterInputError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, { retryable: false, cause: options?.cause });
  }
}
