import { redactUrl } from '@crawlq/urls';
import { CrawlqError, type CrawlqErrorOptions, type FailureReason, failureReasonOfCode, httpFailureReason, messageWithReason } from '@crawlq/errors';
import { RequestError, TimeoutError } from 'got';

/**
 * Base class of every error `Fetcher.fetch()` raises on its own behalf.
 * `retryable` tells the queue whether another attempt later can succeed.
 */
export abstract class FetchError extends CrawlqError {
  /** Why the fetch failed, from the shared list (`FAILURE_REASONS` in @crawlq/errors); undefined when not known. */
  declare abstract readonly failureReason: FailureReason | undefined;
  /** The URL passed to `fetch()`. */
  readonly url: string;

  /** `options.retryable`: whether a later attempt (at the queue level) may succeed. */
  constructor(message: string, url: string, options: CrawlqErrorOptions) {
    super(message, options);
    this.url = url;
  }
}

/** Fields of a {@link RetryableFetchError}. */
export interface RetryableFetchErrorInit {
  readonly url: string;
  /**
   * What went wrong: `'ERR_HTTP_STATUS'` for a retryable status (see `status`),
   * otherwise the network/timeout code (`'ETIMEDOUT'`, `'ECONNREFUSED'`, ...).
   */
  readonly code: string;
  readonly status?: number | undefined;
  readonly retryAfterMs?: number | undefined;
  readonly retries: number;
  /**
   * What the failure was, when `status` and `code` alone would mislead: a
   * reset while reading a 200's body is `network`, not a 200 (the dead
   * letter would otherwise say `http-200`).
   */
  readonly reason?: RetryableFetchReason | undefined;
  /** Said after the code in the message: `reading an HTTP 200 response`. */
  readonly detail?: string | undefined;
  readonly cause?: unknown;
}

/**
 * Why a {@link RetryableFetchError} was raised, when it is more than its status
 * or code: the connection failed, timed out or the body did not decompress
 * while a response was read, or the status line held no HTTP status (`000`,
 * answered like an unreachable server).
 */
export type RetryableFetchReason = Extract<FailureReason, 'network' | 'timeout' | 'decompression' | 'invalid-status'>;

/**
 * The fetch failed in a way that may heal: 408, 429 or 5xx after got's retries,
 * a timeout, or a network/DNS error. Retry the job later (with backoff, and no
 * earlier than `retryAfterMs` when present).
 */
export class RetryableFetchError extends FetchError {
  override readonly name = 'RetryableFetchError';
  /** `'ERR_HTTP_STATUS'` when the server answered with `status`; otherwise the error code. */
  readonly code: string;
  /** Status of the last response, when there was one. */
  readonly status: number | undefined;
  /** The last response's `Retry-After`, in milliseconds from when it was received. */
  readonly retryAfterMs: number | undefined;
  /** Retries got performed before giving up. */
  readonly retries: number;
  /** Set when the failure is not what `status` or `code` would suggest (see the init field). */
  readonly reason: RetryableFetchReason | undefined;
  /**
   * `reason`, else `http-NNN` for `status`, else what `code` or got's error
   * class says (`timeout`, `network`). Also the start of the message (see
   * `messageWithReason`): BullMQ keeps only the message of a failed job.
   */
  declare readonly failureReason: FailureReason | undefined;

  constructor(init: RetryableFetchErrorInit) {
    const what = init.status === undefined ? init.code : `HTTP ${init.status}`;
    const detail = init.detail === undefined ? '' : ` (${init.detail})`;
    const failureReason =
      init.reason ?? (init.status === undefined ? undefined : httpFailureReason(init.status)) ?? failureReasonOfCode(init.code) ?? reasonOfGotError(init.cause);
    const message = `Fetching ${redactUrl(init.url)} failed after ${init.retries} retries: ${what}${detail}`;
    super(failureReason === undefined ? message : messageWithReason(failureReason, message), init.url, { retryable: true, failureReason, cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.retries = init.retries;
    this.reason = init.reason;
  }
}

/** Why a {@link PermanentFetchError} was raised. */
export type PermanentFetchReason = Extract<FailureReason, 'scheme' | 'ssrf' | 'body-too-large' | 'too-many-redirects' | 'invalid-url'>;

/** Fields of a {@link PermanentFetchError}. */
export interface PermanentFetchErrorInit {
  readonly url: string;
  readonly reason: PermanentFetchReason;
  /** Human-readable detail (e.g. the blocked address); never contains credentials. */
  readonly detail: string;
  readonly cause?: unknown;
}

/**
 * The fetch can never succeed as asked: the URL is invalid or not http(s), the
 * target (or a redirect hop) is blocked by the SSRF policy, the body is over the
 * size cap, or redirects exceed the limit. Do not retry.
 */
export class PermanentFetchError extends FetchError {
  override readonly name = 'PermanentFetchError';
  readonly reason: PermanentFetchReason;
  /**
   * The same as `reason`. Not in the message: the crawler fails the job with
   * a `PermanentJobError`, whose message starts with it.
   */
  declare readonly failureReason: PermanentFetchReason;

  constructor(init: PermanentFetchErrorInit) {
    super(`Fetching ${redactUrl(init.url)} refused (${init.reason}): ${init.detail}`, init.url, { retryable: false, failureReason: init.reason, cause: init.cause });
    this.reason = init.reason;
  }
}

/**
 * What a failure that got no response was, as adaptive pacing counts it: a
 * timeout or a failed connection. Undefined for anything else (a response
 * came, a body would not decompress, a policy refusal, an abort).
 */
export function noResponseFailure(error: unknown): 'timeout' | 'network' | undefined {
  let reason: FailureReason | undefined;
  if (error instanceof RetryableFetchError) {
    if (error.status !== undefined) return undefined;
    reason = error.failureReason;
  } else if (error instanceof RequestError) {
    if (error.response !== undefined) return undefined;
    reason = failureReasonOfCode(error.code) ?? reasonOfGotError(error);
  }
  return reason === 'timeout' || reason === 'network' ? reason : undefined;
}

/** A got error without a more telling code: a timeout, or another request failure (connection, TLS, stream). */
function reasonOfGotError(cause: unknown): FailureReason | undefined {
  if (cause instanceof TimeoutError) return 'timeout';
  if (cause instanceof RequestError) return 'network';
  return undefined;
}

/** A redirect's body did not finish in time. Code ETIMEDOUT, so got retries it like any timeout. */
export class RedirectBodyTimeoutError extends CrawlqError {
  override readonly name = 'RedirectBodyTimeoutError';
  readonly code = 'ETIMEDOUT';

  constructor(message: string) {
    super(message, { retryable: true });
  }
}

/**
 * Raised inside got (DNS lookup, hooks, redirect check) when the fetch policy
 * refuses a target. got wraps it in a RequestError (as `cause`); `fetch()`
 * finds it there and turns it into a {@link PermanentFetchError}.
 * Not retryable: its `code` is not one of got's retry error codes.
 */
export class PolicyViolation extends CrawlqError {
  override readonly name = 'PolicyViolation';
  readonly code = 'ERR_CRAWLQ_POLICY';
  readonly reason: PermanentFetchReason;
  /** The same as `reason`, under the name every crawlq error uses for it. */
  declare readonly failureReason: PermanentFetchReason;

  constructor(reason: PermanentFetchReason, message: string) {
    super(message, { retryable: false, failureReason: reason });
    this.reason = reason;
  }
}
