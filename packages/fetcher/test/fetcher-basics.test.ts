import { gzipSync, brotliCompressSync, deflateSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, DEFAULT_USER_AGENT, PermanentFetchError } from '../src/index.js';
import type { Fetcher } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

const page = '<html><head><title>hello</title></head><body>crawlq</body></html>';

let server: TestServer;
let fetcher: Fetcher;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/page':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.setHeader('set-cookie', ['session=secret; HttpOnly', 'other=1']);
        res.setHeader('x-custom', 'kept');
        res.end(page);
        return;
      case '/gzip':
      case '/deflate':
      case '/br': {
        const encoding = url.pathname.slice(1);
        const body = Buffer.from(page.repeat(50));
        const compressed =
          encoding === 'gzip' ? gzipSync(body) : encoding === 'br' ? brotliCompressSync(body) : deflateSync(body);
        res.setHeader('content-type', 'text/html');
        res.setHeader('content-encoding', encoding);
        res.setHeader('content-length', compressed.length);
        res.end(compressed);
        return;
      }
      case '/missing':
        res.statusCode = 404;
        res.end('not here');
        return;
      case '/forbidden':
        res.statusCode = 403;
        res.end('no');
        return;
      case '/hop': {
        // /hop?n=3 -> /hop?n=2 -> /hop?n=1 -> /page
        const n = Number(url.searchParams.get('n'));
        res.statusCode = 302;
        res.setHeader('location', n <= 1 ? '/page' : `/hop?n=${n - 1}`);
        res.end();
        return;
      }
      case '/loop':
        res.statusCode = 301;
        res.setHeader('location', '/loop');
        res.end();
        return;
      case '/to-ftp':
        res.statusCode = 302;
        res.setHeader('location', 'ftp://127.0.0.1/file');
        res.end();
        return;
      case '/to-file':
        res.statusCode = 302;
        res.setHeader('location', 'file:///etc/passwd');
        res.end();
        return;
      case '/not-modified':
        res.statusCode = 304;
        res.end();
        return;
      default:
        res.statusCode = 200;
        res.end('ok');
    }
  });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  fetcher.close();
});

function open(options: Parameters<typeof createFetcher>[0] = {}): Fetcher {
  fetcher = createFetcher({ allowPrivateNetwork: true, retry: { backoffBaseMs: 10 }, ...options });
  return fetcher;
}

describe('fetch results', () => {
  it('returns status, body, headers without set-cookie, and sends the configured User-Agent', async () => {
    const result = await open().fetch(`${server.origin}/page`);
    expect(result.status).toBe(200);
    expect(result.body.toString()).toBe(page);
    expect(result.bodyBytes).toBe(Buffer.byteLength(page));
    expect(result.contentType).toBe('text/html; charset=utf-8');
    expect(result.headers['x-custom']).toBe('kept');
    expect(result.headers).not.toHaveProperty('set-cookie');
    expect(result.url).toBe(`${server.origin}/page`);
    expect(result.finalUrl).toBe(`${server.origin}/page`);
    expect(result.redirects).toEqual([]);
    expect(result.retries).toBe(0);
    expect(result.fetchMs).toBeGreaterThan(0);
    const seen = server.requests.at(-1);
    expect(seen?.headers['user-agent']).toBe(DEFAULT_USER_AGENT);
    expect(seen?.headers.cookie).toBeUndefined();
    expect(seen?.headers['accept-encoding']).toMatch(/gzip/);
  });

  it('sends a custom User-Agent and Accept, and no cookie after a Set-Cookie', async () => {
    const f = open({ userAgent: 'test-agent/1', acceptHeader: 'text/html' });
    await f.fetch(`${server.origin}/page`);
    await f.fetch(`${server.origin}/page?again`);
    const seen = server.requests.at(-1);
    expect(seen?.headers['user-agent']).toBe('test-agent/1');
    expect(seen?.headers.accept).toBe('text/html');
    expect(seen?.headers.cookie).toBeUndefined();
  });

  it.each(['gzip', 'deflate', 'br'])('decompresses %s bodies', async (encoding) => {
    const result = await open().fetch(`${server.origin}/${encoding}`);
    expect(result.body.toString()).toBe(page.repeat(50));
    expect(result.bodyBytes).toBe(Buffer.byteLength(page) * 50);
  });

  it('returns a 404 as a result, fetched exactly once', async () => {
    const before = server.count('/missing');
    const result = await open().fetch(`${server.origin}/missing`);
    expect(result.status).toBe(404);
    expect(result.body.toString()).toBe('not here');
    expect(result.retries).toBe(0);
    expect(server.count('/missing') - before).toBe(1);
  });

  it('returns other 4xx and a 304 as results', async () => {
    const f = open();
    expect((await f.fetch(`${server.origin}/forbidden`)).status).toBe(403);
    expect((await f.fetch(`${server.origin}/not-modified`)).status).toBe(304);
  });
});

describe('redirects', () => {
  it('follows redirects and lists each hop', async () => {
    const result = await open().fetch(`${server.origin}/hop?n=3`);
    expect(result.status).toBe(200);
    expect(result.body.toString()).toBe(page);
    expect(result.redirects).toEqual([
      `${server.origin}/hop?n=2`,
      `${server.origin}/hop?n=1`,
      `${server.origin}/page`,
    ]);
    expect(result.finalUrl).toBe(`${server.origin}/page`);
  });

  it('refuses a redirect loop as too-many-redirects', async () => {
    const before = server.count('/loop');
    const error = await open({ maxRedirects: 4 }).fetch(`${server.origin}/loop`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'too-many-redirects', retryable: false, url: `${server.origin}/loop` });
    // First request plus 4 followed redirects, and no retries.
    expect(server.count('/loop') - before).toBe(5);
  });

  it('honours maxRedirects exactly', async () => {
    const ok = await open({ maxRedirects: 3 }).fetch(`${server.origin}/hop?n=3`);
    expect(ok.status).toBe(200);
    fetcher.close();
    await expect(open({ maxRedirects: 2 }).fetch(`${server.origin}/hop?n=3`)).rejects.toMatchObject({
      reason: 'too-many-redirects',
    });
  });

  it.each(['/to-ftp', '/to-file'])('refuses a redirect to a non-http scheme (%s)', async (path) => {
    const error = await open().fetch(`${server.origin}${path}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'scheme', retryable: false });
  });
});

describe('URL validation', () => {
  it.each([
    ['ftp://127.0.0.1/x', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['not a url', 'invalid-url'],
    ['/relative', 'invalid-url'],
    ['http://unix:/var/run/docker.sock:/info', 'ssrf'],
  ])('refuses %s as %s without a request', async (url, reason) => {
    const before = server.requests.length;
    const error = await open().fetch(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason, url });
    expect(server.requests.length).toBe(before);
  });

  it('does not put URL credentials in error messages', async () => {
    const error = await open().fetch('ftp://user:hunter2@127.0.0.1/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect((error as Error).message).not.toContain('hunter2');
  });
});

describe('keep-alive', () => {
  it('reuses pooled sockets across sequential fetches', async () => {
    const f = open();
    const before = server.connections();
    for (let i = 0; i < 50; i++) {
      const result = await f.fetch(`${server.origin}/keepalive?i=${i}`);
      expect(result.status).toBe(200);
    }
    expect(server.connections() - before).toBeLessThanOrEqual(2);
  });

  it('close() destroys the agents and later fetches fail retryably', async () => {
    const f = open();
    await f.fetch(`${server.origin}/page`);
    f.close();
    f.close();
    await expect(f.fetch(`${server.origin}/page`)).rejects.toMatchObject({
      name: 'RetryableFetchError',
      code: 'ERR_FETCHER_CLOSED',
      retryable: true,
    });
  });
});

describe('abort', () => {
  it('rejects with the signal reason', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    controller.abort(reason);
    await expect(open().fetch(`${server.origin}/page`, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe('per-fetch maxRedirects', () => {
  it('overrides the fetcher default for one fetch', async () => {
    const fetcher = createFetcher({ allowPrivateNetwork: true, maxRedirects: 10 });
    try {
      expect((await fetcher.fetch(`${server.origin}/hop?n=3`, { maxRedirects: 3 })).status).toBe(200);
      await expect(fetcher.fetch(`${server.origin}/hop?n=3`, { maxRedirects: 2 })).rejects.toMatchObject({ reason: 'too-many-redirects' });
      await expect(fetcher.fetch(`${server.origin}/hop?n=3`, { maxRedirects: 2, bodyPrefixBytes: 100 })).rejects.toMatchObject({ reason: 'too-many-redirects' });
    } finally {
      fetcher.close();
    }
  });
});
