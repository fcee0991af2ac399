import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../src/index.js';
import type { Fetcher, RedirectInfo } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

let server: TestServer;
let fetcher: Fetcher | undefined;

beforeAll(async () => {
  server = await startServer((req, res, seen) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const tag = url.searchParams.get('t') ?? '';
    switch (url.pathname) {
      case '/hop': {
        // /hop?n=3 -> /hop?n=2 -> /hop?n=1 -> /page (the tag keeps per-test paths apart)
        const n = Number(url.searchParams.get('n'));
        res.writeHead(302, { location: n <= 1 ? `/page?t=${tag}` : `/hop?n=${n - 1}&t=${tag}` });
        res.end('moved');
        return;
      }
      case '/with-credentials':
        res.writeHead(301, { location: `http://user:s3cret@127.0.0.1:${url.searchParams.get('port')}/page?t=${tag}` });
        res.end();
        return;
      case '/flaky':
        // The first request of each tag fails with a status got retries.
        res.writeHead(seen === 1 ? 503 : 200, { 'content-type': 'text/plain' });
        res.end(seen === 1 ? 'busy' : 'ok');
        return;
      case '/always-500-redirect':
        res.writeHead(301, { location: `/down?t=${tag}` });
        res.end();
        return;
      default:
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
    }
  });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  fetcher?.close();
  fetcher = undefined;
});

function open(): Fetcher {
  fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 3, backoffBaseMs: 10, backoffMaxMs: 20 } });
  return fetcher;
}

const tag = (): string => Math.random().toString(36).slice(2);

describe('attemptHooks.beforeRedirect', () => {
  it('is called before each hop with from and to, in order, and may wait', async () => {
    const t = tag();
    const calls: RedirectInfo[] = [];
    const requestsAtCall: number[] = [];
    const result = await open().fetch(`${server.origin}/hop?n=3&t=${t}`, {
      attemptHooks: {
        beforeRedirect: async (info) => {
          calls.push(info);
          requestsAtCall.push(server.requests.filter((r) => r.path.endsWith(`t=${t}`)).length);
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      },
    });
    expect(result.status).toBe(200);
    expect(calls).toEqual([
      { from: `${server.origin}/hop?n=3&t=${t}`, to: `${server.origin}/hop?n=2&t=${t}`, status: 302 },
      { from: `${server.origin}/hop?n=2&t=${t}`, to: `${server.origin}/hop?n=1&t=${t}`, status: 302 },
      { from: `${server.origin}/hop?n=1&t=${t}`, to: `${server.origin}/page?t=${t}`, status: 302 },
    ]);
    // Each call came before its target was requested.
    expect(requestsAtCall).toEqual([1, 2, 3]);
    expect(result.redirects).toEqual(calls.map((call) => call.to));
  });

  it('stops the fetch when it throws: fetch() rejects with that same object and the target is never requested', async () => {
    class AlreadySeenError extends Error {
      override readonly name = 'AlreadySeenError';
    }
    const t = tag();
    const seen = new AlreadySeenError('redirect target already crawled');
    let calls = 0;
    const error = await open()
      .fetch(`${server.origin}/hop?n=3&t=${t}`, {
        attemptHooks: {
          beforeRedirect: (info) => {
            calls += 1;
            return info.to.includes('n=1') ? Promise.reject(seen) : Promise.resolve();
          },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBe(seen);
    expect(calls).toBe(2);
    expect(server.count(`/hop?n=3&t=${t}`)).toBe(1);
    expect(server.count(`/hop?n=2&t=${t}`)).toBe(1);
    expect(server.count(`/hop?n=1&t=${t}`)).toBe(0);
  });

  it('is not retried even when the thrown error looks transient', async () => {
    const t = tag();
    const transient = Object.assign(new Error('redis timed out'), { code: 'ETIMEDOUT' });
    let calls = 0;
    const error = await open()
      .fetch(`${server.origin}/always-500-redirect?t=${t}`, {
        attemptHooks: {
          beforeRedirect: () => {
            calls += 1;
            return Promise.reject(transient);
          },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBe(transient);
    expect(calls).toBe(1);
    expect(server.count(`/always-500-redirect?t=${t}`)).toBe(1);
    expect(server.count(`/down?t=${t}`)).toBe(0);
  });

  it('is not called for a response that does not redirect', async () => {
    let calls = 0;
    const result = await open().fetch(`${server.origin}/page?t=${tag()}`, {
      attemptHooks: {
        beforeRedirect: () => {
          calls += 1;
          return Promise.resolve();
        },
      },
    });
    expect(result.status).toBe(200);
    expect(calls).toBe(0);
  });

  it('drops user:password of a Location: not sent as credentials, not in the hop, redirects or final URL', async () => {
    fetcher = createFetcher({ allowPrivateNetwork: true });
    const t = 'creds';
    const hops: RedirectInfo[] = [];
    const result = await fetcher.fetch(`${server.origin}/with-credentials?t=${t}&port=${server.port}`, {
      attemptHooks: { beforeRedirect: (info) => Promise.resolve(void hops.push(info)) },
    });
    expect(result.status).toBe(200);
    expect(result.finalUrl).toBe(`${server.origin}/page?t=${t}`);
    expect(result.redirects).toEqual([`${server.origin}/page?t=${t}`]);
    expect(hops.map((hop) => hop.to)).toEqual([`${server.origin}/page?t=${t}`]);
    const target = server.requests.find((request) => request.path === `/page?t=${t}`);
    expect(target?.headers.authorization).toBeUndefined();
  });

  it('a redirect budget per fetch: maxRedirects below the fetcher\'s stops the chain early', async () => {
    fetcher = createFetcher({ allowPrivateNetwork: true, maxRedirects: 10 });
    const error = await fetcher.fetch(`${server.origin}/hop?n=3&t=budget`, { maxRedirects: 2 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ reason: 'too-many-redirects', retryable: false });
    expect(server.count('/page?t=budget')).toBe(0);
  });
});

describe('attemptHooks.beforeSend', () => {
  it('runs before every request of a fetch, after its redirect hook, and may wait: the server sees each request only after it returned', async () => {
    const t = tag();
    const order: string[] = [];
    const seenAtReturn: number[] = [];
    const result = await open().fetch(`${server.origin}/hop?n=2&t=${t}`, {
      attemptHooks: {
        beforeRedirect: (info) => Promise.resolve(void order.push(`redirect ${new URL(info.to).pathname}`)),
        beforeSend: async () => {
          order.push('send');
          await new Promise((resolve) => setTimeout(resolve, 20));
          seenAtReturn.push(server.requests.filter((request) => request.path.endsWith(`t=${t}`)).length);
        },
      },
    });
    expect(result.status).toBe(200);
    expect(order).toEqual(['send', 'redirect /hop', 'send', 'redirect /page', 'send']);
    // The n-th request had not reached the server when its hook returned.
    expect(seenAtReturn).toEqual([0, 1, 2]);
  });

  it('that throws stops the fetch with its own error, unsent and not retried', async () => {
    const t = tag();
    const stop = new Error('held back');
    let calls = 0;
    const error = await open()
      .fetch(`${server.origin}/page?t=${t}`, {
        attemptHooks: {
          beforeSend: () => {
            calls += 1;
            return Promise.reject(stop);
          },
        },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBe(stop);
    expect(calls).toBe(1);
    expect(server.count(`/page?t=${t}`)).toBe(0);
  });

  it('runs before each retry too', async () => {
    const t = tag();
    let sends = 0;
    let retries = 0;
    const result = await open().fetch(`${server.origin}/flaky?t=${t}`, {
      attemptHooks: {
        beforeRetry: () => Promise.resolve(void (retries += 1)),
        beforeSend: () => Promise.resolve(void (sends += 1)),
      },
    });
    expect(result.status).toBe(200);
    expect(retries).toBe(1);
    expect(server.count(`/flaky?t=${t}`)).toBe(2);
    expect(sends).toBe(2);
  });
});
