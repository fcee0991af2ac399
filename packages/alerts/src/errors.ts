import { CrawlqError } from '@crawlq/errors';

/**
 * An alert could not be delivered (SMTP refused or unreachable, outbox not
 * writable). Retryable: the alert job is retried with backoff and kept.
 */
export class AlertDeliveryError extends CrawlqError {
  override readonly name = 'AlertDeliveryError';
  /** `smtp` or `outbox`. */
  readonly channel: 'smtp' | 'outbox';
  /** SMTP reply code when the server answered (e.g. 421), otherwise null. */
  readonly responseCode: number | null;

  constructor(channel: 'smtp' | 'outbox', message: string, options?: ErrorOptions & { responseCode?: number | null }) {
    super(message, { retryable: true, cause: options?.cause });
    this.channel = channel;
    this.responseCode = options?.responseCode ?? null;
  }
}

/**
 * The alert mail configuration cannot work (an SMTP URL that does not parse or
 * has another scheme, SMTP without recipients). Not retryable: fix the config.
 */
export class AlertConfigError extends CrawlqError {
  override readonly name = 'AlertConfigError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, { retryable: false, cause: options?.cause });
  }
}
