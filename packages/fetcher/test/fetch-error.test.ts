import { RequestError, TimeoutError } from 'got';
import { describe, expect, it } from 'vitest';
import { noResponseFailure, PermanentFetchError, RetryableFetchError } from '../src/index.js';
import { PolicyViolation } from '../src/errors.js';

const url = 'https://user:secret@x.test/a';

describe('failureReason', () => {
  it('RetryableFetchError: its reason, else http-NNN, else the code, else what got says', () => {
    expect(new RetryableFetchError({ url, code: 'ECONNRESET', reason: 'network', status: 200, retries: 0 }).failureReason).toBe('network');
    expect(new RetryableFetchError({ url, code: 'ERR_HTTP_STATUS', status: 429, retries: 2 }).failureReason).toBe('http-429');
    expect(new RetryableFetchError({ url, code: 'ESOCKETTIMEDOUT', retries: 2 }).failureReason).toBe('timeout');
    expect(new RetryableFetchError({ url, code: 'EAI_AGAIN', retries: 2 }).failureReason).toBe('network');
    // got's constructors want a live request; the class is all that matters here.
    const timedOut = Object.assign(new Error('Timeout awaiting request'), { event: 'request', code: 'ETIMEDOUT' });
    const gotTimeout = new TimeoutError(timedOut as never, {} as never, undefined as never);
    expect(new RetryableFetchError({ url, code: 'ERR_UNKNOWN', retries: 2, cause: gotTimeout }).failureReason).toBe('timeout');
    const gotFailure = new RequestError('boom', {}, undefined as never);
    expect(new RetryableFetchError({ url, code: 'ERR_UNKNOWN', retries: 2, cause: gotFailure }).failureReason).toBe('network');
    expect(new RetryableFetchError({ url, code: 'ERR_FETCHER_CLOSED', retries: 0 }).failureReason).toBeUndefined();
  });

  it('RetryableFetchError: the message starts with the reason, when there is one', () => {
    expect(new RetryableFetchError({ url, code: 'ERR_HTTP_STATUS', status: 503, retries: 2 }).message).toBe(
      'http-503: Fetching https://x.test/a failed after 2 retries: HTTP 503',
    );
    expect(new RetryableFetchError({ url, code: 'ERR_FETCHER_CLOSED', retries: 0 }).message).toBe('Fetching https://x.test/a failed after 0 retries: ERR_FETCHER_CLOSED');
  });

  it('PermanentFetchError and PolicyViolation: their reason', () => {
    const refused = new PermanentFetchError({ url, reason: 'ssrf', detail: '10.0.0.1 is not allowed' });
    expect(refused.failureReason).toBe('ssrf');
    expect(refused.message).toBe('Fetching https://x.test/a refused (ssrf): 10.0.0.1 is not allowed');
    expect(new PolicyViolation('body-too-large', 'too big').failureReason).toBe('body-too-large');
  });
});

describe('noResponseFailure (adaptive pacing)', () => {
  it('is a timeout or a failed connection when no response came, else undefined', () => {
    expect(noResponseFailure(new RetryableFetchError({ url, code: 'ETIMEDOUT', retries: 0 }))).toBe('timeout');
    expect(noResponseFailure(new RetryableFetchError({ url, code: 'ECONNREFUSED', retries: 0 }))).toBe('network');
    expect(noResponseFailure(new RetryableFetchError({ url, code: 'ERR_HTTP_STATUS', status: 503, retries: 0 }))).toBeUndefined();
    // A reset while reading a 200's body: a response came.
    expect(noResponseFailure(new RetryableFetchError({ url, code: 'ECONNRESET', reason: 'network', status: 200, retries: 0 }))).toBeUndefined();
    expect(noResponseFailure(new RetryableFetchError({ url, code: 'Z_DATA_ERROR', retries: 0 }))).toBeUndefined();
    expect(noResponseFailure(new RequestError('boom', { code: 'ECONNRESET' }, undefined as never))).toBe('network');
    expect(noResponseFailure(new PermanentFetchError({ url, reason: 'ssrf', detail: 'no' }))).toBeUndefined();
    expect(noResponseFailure(new Error('aborted'))).toBeUndefined();
  });
});
