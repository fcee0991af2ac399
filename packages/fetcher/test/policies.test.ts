import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { checkLiteralHost, createGuardedLookup, publicAddressesOnly } from '../src/address-guard.js';
import { resolveFetcherOptions } from '../src/fetcher-options.js';
import { PolicyViolation } from '../src/errors.js';
import { createCalculateDelay, isRetryableStatus, parseRetryAfter } from '../src/retry-policy.js';
import type { RetryObject } from 'got';

// IP classification itself is @crawlq/urls' job (and tested there).
describe('checkLiteralHost', () => {
  it('refuses disallowed IP literals and ignores names', () => {
    expect(() => checkLiteralHost('127.0.0.1', publicAddressesOnly)).toThrow(PolicyViolation);
    expect(() => checkLiteralHost('[::1]', publicAddressesOnly)).toThrow(PolicyViolation);
    expect(() => checkLiteralHost('[::ffff:169.254.169.254]', publicAddressesOnly)).toThrow(/metadata/);
    expect(() => checkLiteralHost('8.8.8.8', publicAddressesOnly)).not.toThrow();
    expect(() => checkLiteralHost('localhost', publicAddressesOnly)).not.toThrow();
  });
});

type LookupOutcome = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };

function runLookup(
  resolved: readonly string[] | Error,
  options: { all?: boolean; family?: number },
  policy = (address: string): boolean => address.startsWith('8.'),
): Promise<LookupOutcome> {
  const lookup = createGuardedLookup({
    policy,
    resolve: () => (resolved instanceof Error ? Promise.reject(resolved) : Promise.resolve(resolved)),
  });
  return new Promise((resolve) => {
    lookup('host.test', options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe('createGuardedLookup', () => {
  it('hands Node only the allowed addresses (all: true)', async () => {
    const outcome = await runLookup(['127.0.0.1', '8.8.8.8', '10.0.0.1', '8.8.4.4'], { all: true });
    expect(outcome.error).toBeNull();
    expect(outcome.address).toEqual([
      { address: '8.8.8.8', family: 4 },
      { address: '8.8.4.4', family: 4 },
    ]);
  });

  it('returns the first allowed address (all: false) and honours family', async () => {
    const single = await runLookup(['127.0.0.1', '8.8.8.8'], {});
    expect(single).toMatchObject({ error: null, address: '8.8.8.8', family: 4 });
    const v6 = await runLookup(['8.8.8.8', '2001:4860::8888'], { family: 6 }, () => true);
    expect(v6).toMatchObject({ error: null, address: '2001:4860::8888', family: 6 });
  });

  it('fails with a PolicyViolation when every address is refused', async () => {
    const outcome = await runLookup(['127.0.0.1', '::1'], { all: true });
    expect(outcome.error).toBeInstanceOf(PolicyViolation);
    expect(outcome.error).toMatchObject({ reason: 'ssrf' });
  });

  it('fails with ENOTFOUND when nothing resolves, and passes resolver errors on', async () => {
    expect((await runLookup([], { all: true })).error).toMatchObject({ code: 'ENOTFOUND' });
    const failure = Object.assign(new Error('boom'), { code: 'EAI_AGAIN' });
    expect((await runLookup(failure, { all: true })).error).toBe(failure);
  });
});

describe('retry policy', () => {
  it('classifies retryable statuses', () => {
    expect([408, 429, 500, 503, 599].every(isRetryableStatus)).toBe(true);
    expect([200, 301, 404, 410, 418].some(isRetryableStatus)).toBe(false);
  });

  it('parses Retry-After seconds and HTTP-dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(['5', '9'], now)).toBe(5000);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
  });

  const retry = (over: Partial<RetryObject>): RetryObject => ({ attemptCount: 1, computedValue: 1000, ...over }) as RetryObject;

  it('keeps got\'s "no retry" verdict and stops on request', () => {
    const delay = createCalculateDelay({ backoffBaseMs: 100, backoffMaxMs: 1000, stop: () => false });
    expect(delay(retry({ computedValue: 0 }))).toBe(0);
    const stopped = createCalculateDelay({ backoffBaseMs: 100, backoffMaxMs: 1000, stop: () => true });
    expect(stopped(retry({}))).toBe(0);
  });

  it('uses Retry-After when got accepted it', () => {
    const delay = createCalculateDelay({ backoffBaseMs: 100, backoffMaxMs: 1000, stop: () => false });
    expect(delay(retry({ retryAfter: 4000, computedValue: 4000 }))).toBe(4000);
  });

  it('draws full-jitter backoff within [1, min(max, base * 2^(n-1))]', () => {
    const delay = createCalculateDelay({ backoffBaseMs: 100, backoffMaxMs: 1000, stop: () => false });
    for (const [attemptCount, ceiling] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [5, 1000],
      [10, 1000],
    ] as const) {
      const samples = Array.from({ length: 200 }, () => delay(retry({ attemptCount })));
      expect(Math.min(...samples)).toBeGreaterThanOrEqual(1);
      expect(Math.max(...samples)).toBeLessThanOrEqual(ceiling);
      // Jitter, not a constant: the samples spread over the range.
      expect(Math.max(...samples) - Math.min(...samples)).toBeGreaterThan(ceiling / 4);
    }
  });
});

describe('options and redaction', () => {
  it('applies defaults', () => {
    const config = resolveFetcherOptions({});
    expect(config).toMatchObject({
      maxBodyBytes: 10 * 1024 * 1024,
      maxRedirects: 10,
      allowPrivateNetwork: false,
      agent: { maxSockets: 64, maxFreeSockets: 16, keepAliveMsecs: 1000, freeSocketTimeoutMs: 15_000 },
      timeouts: { lookupMs: 5000, connectMs: 10_000, responseMs: 15_000, requestMs: 30_000 },
      retry: { limit: 2, backoffBaseMs: 500, backoffMaxMs: 10_000, maxRetryAfterMs: 30_000 },
    });
  });

  it('rejects nonsense', () => {
    expect(() => resolveFetcherOptions({ maxBodyBytes: -1 })).toThrow(RangeError);
    expect(() => resolveFetcherOptions({ retry: { limit: Number.NaN } })).toThrow(RangeError);
    expect(() => resolveFetcherOptions({ agent: { maxSockets: 0 } })).toThrow(RangeError);
  });
});
