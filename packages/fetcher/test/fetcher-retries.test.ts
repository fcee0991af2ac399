import type http from 'node:http';
import { waitFor } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, RetryableFetchError } from '../src/index.js';
import type { Fetcher, FetcherOptions, RetryInfo } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

let server: TestServer;
let fetcher: Fetcher | undefined;
const hanging = new Set<http.ServerResponse>();

beforeAll(async () => {
  server = await startServer((req, res, seen) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const status = (code: number, headers: Record<string, string> = {}): void => {
      res.writeHead(code, headers);
      res.end(`status ${code}`);
    };
    switch (url.pathname) {
      case '/flaky': // 503 once, then 200
        if (seen === 1) status(503);
        else status(200);
        return;
      case '/down':
        status(500);
        return;
      case '/bad-gateway-after-redirect':
        status(502);
        return;
      case '/hang':
        // Never answers; the client's response timeout must fire.
        hanging.add(res);
        return;
      case '/throttled': // 429 with Retry-After: 1 (seconds), then 200
        if (seen === 1) status(429, { 'retry-after': '1' });
        else status(200);
        return;
      case '/throttled-date': // 503 with an HTTP-date Retry-After ~2 s ahead, then 200
        if (seen === 1) status(503, { 'retry-after': new Date(Date.now() + 2000).toUTCString() });
        else status(200);
        return;
      case '/throttled-long': // always 429, Retry-After far above the cap
        status(429, { 'retry-after': '3600' });
        return;
      case '/teapot':
        status(418);
        return;
      case '/not-implemented':
        status(501);
        return;
      default:
        status(200);
    }
  });
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await server.close();
});

afterEach(() => {
  fetcher?.close();
  fetcher = undefined;
});

function open(options: FetcherOptions = {}): Fetcher {
  fetcher = createFetcher({
    allowPrivateNetwork: true,
    ...options,
    retry: { backoffBaseMs: 20, backoffMaxMs: 50, ...options.retry },
  });
  return fetcher;
}

/** A unique path per test so per-path request counts start at zero. */
function unique(path: string): string {
  return `${path}?t=${Math.random().toString(36).slice(2)}`;
}

describe('got retries', () => {
  it('retries a 503 and succeeds with retries === 1', async () => {
    const path = unique('/flaky');
    const result = await open().fetch(`${server.origin}${path}`);
    expect(result.status).toBe(200);
    expect(result.retries).toBe(1);
    expect(server.count(path)).toBe(2);
  });

  it('throws RetryableFetchError after limit + 1 requests of a persistent 500', async () => {
    const path = unique('/down');
    const error = await open({ retry: { limit: 3 } }).fetch(`${server.origin}${path}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ status: 500, code: 'ERR_HTTP_STATUS', retries: 3, retryable: true });
    expect(server.count(path)).toBe(4);
  });

  it('does not retry when the limit is 0', async () => {
    const path = unique('/down');
    await expect(open({ retry: { limit: 0 } }).fetch(`${server.origin}${path}`)).rejects.toBeInstanceOf(
      RetryableFetchError,
    );
    expect(server.count(path)).toBe(1);
  });

  it('fetches a 418 once and returns it', async () => {
    const path = unique('/teapot');
    const result = await open().fetch(`${server.origin}${path}`);
    expect(result.status).toBe(418);
    expect(server.count(path)).toBe(1);
  });

  it('treats a 501 as retryable at the queue level without got retries', async () => {
    const path = unique('/not-implemented');
    await expect(open().fetch(`${server.origin}${path}`)).rejects.toMatchObject({ status: 501, retries: 0 });
    expect(server.count(path)).toBe(1);
  });

  it('times out a response that never comes, retries it, then fails with ETIMEDOUT', async () => {
    const path = unique('/hang');
    const error = await open({ timeouts: { responseMs: 300 }, retry: { limit: 1 } })
      .fetch(`${server.origin}${path}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ code: 'ETIMEDOUT', status: undefined, retries: 1 });
    expect(server.count(path)).toBe(2);
  });

  it('fails with ECONNREFUSED when nothing listens, after retrying', async () => {
    const closed = await startServer(() => undefined);
    const origin = closed.origin;
    await closed.close();
    const error = await open({ retry: { limit: 1 } }).fetch(`${origin}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', retries: 1 });
  });
});

describe('Retry-After', () => {
  it('waits for Retry-After in seconds on a 429', async () => {
    const path = unique('/throttled');
    const result = await open().fetch(`${server.origin}${path}`);
    expect(result.status).toBe(200);
    expect(result.retries).toBe(1);
    const [first, second] = server.requests.filter((r) => r.path === path);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
  });

  it('waits for Retry-After as an HTTP-date', async () => {
    const path = unique('/throttled-date');
    const result = await open().fetch(`${server.origin}${path}`);
    expect(result.status).toBe(200);
    const [first, second] = server.requests.filter((r) => r.path === path);
    // The date has 1-second resolution, so ~2 s ahead means at least ~1 s of wait.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
  });

  it('gives up at once on a Retry-After above the cap, with a retryable error carrying it', async () => {
    const path = unique('/throttled-long');
    const error = await open({ retry: { maxRetryAfterMs: 5000 } })
      .fetch(`${server.origin}${path}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3_600_000, retries: 0, retryable: true });
    expect(server.count(path)).toBe(1);
  });
});

describe('attemptHooks.beforeRetry', () => {
  it('is called once per retry with the retry count, status and url', async () => {
    const path = unique('/down');
    const calls: RetryInfo[] = [];
    const error = await open({ retry: { limit: 2 } })
      .fetch(`${server.origin}${path}`, {
        attemptHooks: {
          beforeRetry: async (info) => {
            calls.push(info);
            await new Promise((resolve) => setTimeout(resolve, 5));
          },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(calls.map((c) => c.retryCount)).toEqual([1, 2]);
    expect(calls.every((c) => c.status === 500 && c.url === `${server.origin}${path}`)).toBe(true);
    expect(server.count(path)).toBe(3);
  });

  it('onRequestSent fires once per attempt, as each one goes out', async () => {
    const path = unique('/down');
    const sentWhenServerHad: number[] = [];
    await open({ retry: { limit: 2 } })
      .fetch(`${server.origin}${path}`, { attemptHooks: { onRequestSent: () => sentWhenServerHad.push(server.count(path)) } })
      .catch(() => undefined);
    // Three attempts, one call each, in order: the k-th call came before the
    // server answered the k-th attempt (it may just have seen it arrive).
    expect(sentWhenServerHad).toHaveLength(3);
    sentWhenServerHad.forEach((seen, k) => expect(seen === k || seen === k + 1).toBe(true));
    expect(server.count(path)).toBe(3);
  });

  it('onResponseHead fires once per attempt, after that attempt went out', async () => {
    const path = unique('/down');
    const events: string[] = [];
    await open({ retry: { limit: 2 } })
      .fetch(`${server.origin}${path}`, { attemptHooks: { onRequestSent: () => events.push('sent'), onResponseHead: () => events.push('head') } })
      .catch(() => undefined);
    expect(events).toEqual(['sent', 'head', 'sent', 'head', 'sent', 'head']);
  });

  it('tells the retry hook a timeout without a response from a failed response', async () => {
    const failures: RetryInfo['failure'][] = [];
    const hook = { beforeRetry: (info: RetryInfo) => Promise.resolve(void failures.push(info.failure)) };
    await open({ timeouts: { responseMs: 300 }, retry: { limit: 1 } })
      .fetch(`${server.origin}${unique('/hang')}`, { attemptHooks: hook })
      .catch(() => undefined);
    await open({ retry: { limit: 1 } })
      .fetch(`${server.origin}${unique('/down')}`, { attemptHooks: hook })
      .catch(() => undefined);
    expect(failures).toEqual(['timeout', undefined]);
  });

  it('passes the Retry-After to the hook', async () => {
    const path = unique('/throttled');
    const seen: (number | undefined)[] = [];
    await open().fetch(`${server.origin}${path}`, {
      attemptHooks: {
        beforeRetry: (info) => {
          seen.push(info.retryAfterMs);
          return Promise.resolve();
        },
      },
    });
    expect(seen).toEqual([1000]);
  });

  it('is not called when there is no retry', async () => {
    let calls = 0;
    await open().fetch(`${server.origin}${unique('/ok')}`, {
      attemptHooks: {
        beforeRetry: () => {
          calls++;
          return Promise.resolve();
        },
      },
    });
    expect(calls).toBe(0);
  });

  it('aborts the retry loop when it throws, and fetch() rejects with that same object', async () => {
    class DeferRequestError extends Error {
      override readonly name = 'DeferRequestError';
    }
    const defer = new DeferRequestError('domain busy, defer the job');
    const path = unique('/down');
    let calls = 0;
    const error = await open({ retry: { limit: 5 } })
      .fetch(`${server.origin}${path}`, {
        attemptHooks: {
          beforeRetry: () => {
            calls++;
            return Promise.reject(defer);
          },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBe(defer);
    expect(calls).toBe(1);
    expect(server.count(path)).toBe(1);
  });
});

describe('cancellation', () => {
  it('rejects with the signal reason when aborted mid-request, without retrying', async () => {
    const path = unique('/hang');
    const controller = new AbortController();
    const reason = new Error('worker shutting down');
    const pending = open().fetch(`${server.origin}${path}`, { signal: controller.signal });
    await waitFor(() => server.count(path) === 1, { what: 'the request at the server', timeoutMs: 5_000, intervalMs: 10 });
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(server.count(path)).toBe(1);
  });

  it('close() fails in-flight fetches retryably and stops got retries', async () => {
    const path = unique('/hang');
    const f = open({ retry: { limit: 3 } });
    const pending = f.fetch(`${server.origin}${path}`);
    await waitFor(() => server.count(path) === 1, { what: 'the request at the server', timeoutMs: 5_000, intervalMs: 10 });
    f.close();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ retries: 0 });
    expect(server.count(path)).toBe(1);
  });
});
