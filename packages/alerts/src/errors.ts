/**
 * An alert could not be delivered (SMTP refused or unreachable, outbox not
 * writable). Retryable: the alert job is retried with backoff and kept.
 */
export class AlertDeliveryError extends Error {
  override readonly name = 'AlertDeliveryError';
  readonly retryable = true;
  /** `smtp` or `outbox`. */
  readonly channel: 'smtp' | 'outbox';
  /** SMTP reply code when the server answered (e.g. 421), otherwise null. */
  readonly responseCode: number | null;

  constructor(channel: 'smtp' | 'outbox', message: string, options?: ErrorOptions & { responseCode?: number | null }) {
    super(message, options);
    this.channel = channel;
    this.responseCode = options?.responseCode ?? null;
  }
}

/**
 * The alert mail configuration cannot work (an SMTP URL that does not parse or
 * has another scheme, SMTP without recipients). Not retryable: fix the config.
 */
export class AlertConfigError extends Error {
  override readonly name = 'AlertConfigError';
  readonly retryable = false;
}
