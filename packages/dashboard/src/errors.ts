import { CrawlqError } from '@crawlq/errors';

/**
 * The dashboard options cannot be used safely or at all (a public address
 * without auth, an empty password, a bad port or job policy). Not retryable:
 * fix the options.
 */
export class DashboardConfigError extends CrawlqError {
  override readonly name = 'DashboardConfigError';
  /** The option at fault (`host`, `auth`, `port`, `jobPolicy`, ...). */
  readonly option: string;

  constructor(option: string, message: string, options?: ErrorOptions) {
    super(message, { retryable: false, cause: options?.cause });
    this.option = option;
  }
}

/**
 * The dashboard could not start: Redis did not answer, or the port could not
 * be bound. Retryable by the operator once the cause is fixed.
 */
export class DashboardStartError extends CrawlqError {
  override readonly name = 'DashboardStartError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, { retryable: true, cause: options?.cause });
  }
}

/** A query parameter that does not parse. Not retryable: fix the request (HTTP 400). */
export class QueryError extends CrawlqError {
  override readonly name = 'QueryError';
  readonly parameter: string;
  constructor(parameter: string, message: string) {
    super(message, { retryable: false });
    this.parameter = parameter;
  }
}

/** A group name the limiter could not take; the request is at fault. */
export class GroupNameError extends CrawlqError {
  override readonly name = 'GroupNameError';

  constructor(message: string) {
    super(message, { retryable: false });
  }
}

/** An API request refused before it ran; `status` is the HTTP status. Not retryable as is. */
export class ApiError extends CrawlqError {
  override readonly name = 'ApiError';
  readonly status: number;
  constructor(status: number, message: string) {
    super(message, { retryable: false });
    this.status = status;
  }
}

/** A form POST without our CSRF token. */
export class CsrfError extends CrawlqError {
  override readonly name = 'CsrfError';

  constructor(message: string) {
    super(message, { retryable: false });
  }
}
