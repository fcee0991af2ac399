import { classifyFailure, classifyFailureMessage } from '@crawlq/dead-letter';
import { PermanentFetchError, RetryableFetchError } from '@crawlq/fetcher';
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { BlockedGroupError, PermanentJobError, RobotsUnreachableError } from '../src/index.js';

// every error that fails a crawl job says its reason as data
// (`failureReason`), and its message starts with it, so a dead letter gets the
// same reason from the thrown error (the worker's 'failed' event) and from
// what BullMQ kept of it (`failedReason` and the stack, read by reconcile()).

/** The reason from the error object, and from the text BullMQ keeps of it. */
function reasons(error: Error): { live: string; kept: string; status: number | null } {
  const live = classifyFailure(error);
  const kept = classifyFailureMessage(error.message, error.stack);
  expect(kept.status).toBe(live.status);
  return { live: live.reason, kept: kept.reason, status: live.status };
}

const url = 'https://x.test/a';

describe('failure reasons as data', () => {
  it.each([
    ['a failing status', new RetryableFetchError({ url, code: 'ERR_HTTP_STATUS', status: 503, retries: 2 }), 'http-503', 503],
    ['a timeout code', new RetryableFetchError({ url, code: 'ETIMEDOUT', retries: 2 }), 'timeout', null],
    ['a refused connection', new RetryableFetchError({ url, code: 'ECONNREFUSED', retries: 0 }), 'network', null],
    [
      'a reset while reading a 200',
      new RetryableFetchError({ url, code: 'ECONNRESET', reason: 'network', detail: 'reading an HTTP 200 response', retries: 0 }),
      'network',
      null,
    ],
    ['a bad body', new RetryableFetchError({ url, code: 'Z_DATA_ERROR', reason: 'decompression', retries: 0 }), 'decompression', null],
    ['a 000 status line', new RetryableFetchError({ url, code: 'ERR_INVALID_STATUS', reason: 'invalid-status', retries: 0 }), 'invalid-status', null],
  ] as const)('RetryableFetchError: %s', (_what, error, reason, status) => {
    expect(error.failureReason).toBe(reason);
    expect(error.message.startsWith(`${reason}: Fetching https://x.test/a failed after`)).toBe(true);
    expect(reasons(error)).toEqual({ live: reason, kept: reason, status });
  });

  it('RetryableFetchError: an unknown code keeps the old message and falls back', () => {
    const closed = new RetryableFetchError({ url, code: 'ERR_FETCHER_CLOSED', retries: 0 });
    expect(closed.failureReason).toBeUndefined();
    expect(closed.message).toBe('Fetching https://x.test/a failed after 0 retries: ERR_FETCHER_CLOSED');
    expect(reasons(closed)).toMatchObject({ live: 'error', kept: 'error' });
  });

  it.each(['ssrf', 'scheme', 'body-too-large', 'too-many-redirects', 'invalid-url'] as const)('PermanentFetchError (%s), as the crawler fails the job with it', (reason) => {
    const fetchError = new PermanentFetchError({ url, reason, detail: 'detail' });
    expect(fetchError.failureReason).toBe(reason);
    const job = new PermanentJobError(fetchError.failureReason, fetchError.message, { cause: fetchError });
    expect(job.message).toBe(`${reason}: Fetching https://x.test/a refused (${reason}): detail`);
    expect(reasons(job)).toMatchObject({ live: reason, kept: reason });
  });

  it('BlockedGroupError and RobotsUnreachableError, as the crawler fails the job with them', () => {
    const blocked = new BlockedGroupError('x.test', 61_000, 'admin pause');
    expect(blocked.failureReason).toBe('blocked-group');
    expect(reasons(new PermanentJobError(blocked.failureReason, blocked.message, { cause: blocked }))).toMatchObject({ live: 'blocked-group', kept: 'blocked-group' });
    const robots = new RobotsUnreachableError({ robotsUrl: 'https://x.test/robots.txt', status: 503, error: 'HTTP 503', failures: 4, forMs: 120_000 });
    expect(robots.failureReason).toBe('robots-unreachable');
    const job = new PermanentJobError(robots.failureReason, robots.message, { cause: robots, status: robots.status });
    expect(reasons(job)).toEqual({ live: 'robots-unreachable', kept: 'robots-unreachable', status: 503 });
  });

  it('reads the reason from the message, not the wording after it', () => {
    // Wording the old patterns would misread ("robots" before the status).
    const job = new PermanentJobError('ssrf', 'robots.txt says HTTP 404 somewhere in the detail');
    expect(classifyFailureMessage(job.message).reason).toBe('ssrf');
  });

  it('falls back to the patterns for foreign errors and older messages', () => {
    expect(classifyFailureMessage('job stalled more than allowable limit').reason).toBe('stalled');
    expect(classifyFailureMessage('Fetching https://x.test/ failed after 2 retries: HTTP 502')).toMatchObject({ reason: 'http-502', status: 502 });
    expect(classifyFailureMessage('ssrf: Fetching https://x.test/ refused (ssrf): 10.0.0.1 is private').reason).toBe('ssrf');
    expect(classifyFailureMessage('group a.test has been waiting 60 s (paused), past --max-blocked').reason).toBe('blocked-group');
    expect(classifyFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })).reason).toBe('network');
    expect(classifyFailure(new UnrecoverableError('PermanentFetchError: Fetching https://x.test/a refused (body-too-large): too big')).reason).toBe('body-too-large');
    expect(classifyFailure(new Error('error: something odd')).reason).toBe('error');
  });
});

