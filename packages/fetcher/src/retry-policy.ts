import type { RetryObject } from 'got';

/** Statuses got retries in-process (Cloudflare's 521/522/524 are origin-down/timeouts). */
export const RETRY_STATUS_CODES: readonly number[] = [408, 429, 500, 502, 503, 504, 521, 522, 524];

/**
 * Error codes got retries in-process: timeouts, resets and transient network or
 * DNS failures. ENOTFOUND is left out: an unknown name rarely appears within
 * seconds, so it goes straight to the queue (still retryable there, with its
 * much longer backoff).
 */
export const RETRY_ERROR_CODES: readonly string[] = [
  'ETIMEDOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'EADDRINUSE',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
];

/** True for statuses that mean "try again later": 408, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * Parses `Retry-After` (delay-seconds or HTTP-date) into milliseconds from
 * `now`; undefined when absent or unparseable. A date in the past yields 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date always names a day and month; without letters Date.parse
  // would read "-3" or "1.5" as years.
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Options of {@link createCalculateDelay}. */
export interface BackoffOptions {
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Returns true when no more retries may start (e.g. the fetcher is closing or the fetch is settled). */
  readonly stop: (retry: RetryObject) => boolean;
}

/**
 * got `retry.calculateDelay`: keep got's verdict on WHETHER to retry (limit,
 * method, status/error code, and `Retry-After` above `maxRetryAfter`, all of
 * which make got's computed value 0), but replace HOW LONG to wait by
 * exponential backoff with full jitter, or the server's `Retry-After`.
 */
export function createCalculateDelay(options: BackoffOptions): (retry: RetryObject) => number {
  const { stop } = options;
  return (retry) => {
    if (retry.computedValue === 0 || stop(retry)) return 0;
    // got hands back a truthy, in-cap Retry-After as the computed value itself.
    if (retry.retryAfter !== undefined && retry.retryAfter > 0) return retry.computedValue;
    return backoffDelayMs(retry.attemptCount, options);
  };
}

/**
 * The wait before retry `attempt` (1-based): exponential backoff with full
 * jitter, at least 1 ms (0 would tell got "do not retry").
 */
export function backoffDelayMs(attempt: number, options: Pick<BackoffOptions, 'backoffBaseMs' | 'backoffMaxMs'>): number {
  const ceiling = Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** (attempt - 1));
  return Math.max(1, Math.random() * ceiling);
}
