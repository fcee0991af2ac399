import type http from 'node:http';
import type { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, PermanentFetchError, RetryableFetchError } from '../src/index.js';
import type { Fetcher, FetcherOptions, RetryInfo } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

// Fetcher.stream(): the response head resolves the call, the body arrives as
// it is read; same redirects, SSRF guard, retries and cap as fetch().
const CAP = 1024 * 1024;
let server: TestServer;
let fetcher: Fetcher | undefined;
/** Per path: resolves the server's wait before it sends the rest, and tells when the response closed and whether it had finished. */
const holds = new Map<string, { release: () => void; closed: Promise<{ finished: boolean }> }>();

function hold(path: string, res: http.ServerResponse): Promise<void> {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const closed = new Promise<{ finished: boolean }>((resolve) => res.once('close', () => resolve({ finished: res.writableFinished })));
  holds.set(path, { release, closed });
  return released;
}

beforeAll(async () => {
  server = await startServer((req, res, seen) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/slow':
        // The first part, then nothing until the test has read it.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first part;');
        void hold('/slow', res).then(() => res.end('rest'));
        return;
      case '/gzip-encoded': {
        res.writeHead(200, { 'content-encoding': 'gzip' });
        const gzip = createGzip();
        gzip.pipe(res);
        gzip.end('x'.repeat(100_000));
        return;
      }
      case '/gzip-bomb':
        // Small on the wire (no Content-Length survives decoding), 8x the cap decoded.
        res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(8 * CAP)));
        return;
      case '/endless': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        void hold('/endless', res);
        const pump = (): void => {
          while (!res.destroyed && res.write(Buffer.alloc(16 * 1024, 'e')));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      case '/declared-too-large':
        res.writeHead(200, { 'content-length': String(2 * CAP) });
        res.write('a');
        return;
      case '/flaky':
        if (seen === 1) res.writeHead(503).end('busy');
        else res.end('ok after a retry');
        return;
      case '/retry-after-long':
        res.writeHead(503, { 'retry-after': '3600' }).end();
        return;
      case '/reset-mid-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('half', () => res.socket?.destroy());
        return;
      case '/to-literal':
        res.writeHead(302, { location: `http://127.0.0.1:${server.port}/secret` }).end();
        return;
      case '/to-self':
        res.writeHead(302, { location: '/slow-free' }).end();
        return;
      default:
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

function open(options: FetcherOptions = {}): Fetcher {
  fetcher = createFetcher({ allowPrivateNetwork: true, maxBodyBytes: CAP, retry: { backoffBaseMs: 10 }, ...options });
  return fetcher;
}

async function readAll(body: Readable): Promise<string> {
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

async function failureOf(body: Readable): Promise<unknown> {
  return readAll(body).then(
    () => new Error('the body ended without an error'),
    (error: unknown) => error,
  );
}

describe('Fetcher.stream', () => {
  it('hands out the body while the server is still sending it', async () => {
    const result = await open().stream(`${server.origin}/slow`);
    expect(result.status).toBe(200);
    const iterator = result.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(String(first.value)).toBe('first part;');
    // The server still holds the rest: it sends it only now.
    holds.get('/slow')?.release();
    let rest = '';
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) rest += String(next.value);
    expect(rest).toBe('rest');
    expect(await holds.get('/slow')?.closed).toEqual({ finished: true });
  });

  it('decodes Content-Encoding', async () => {
    const result = await open().stream(`${server.origin}/gzip-encoded`);
    expect(result.headers['content-encoding']).toBeUndefined();
    expect(await readAll(result.body)).toBe('x'.repeat(100_000));
  });

  it('applies the cap to decoded bytes: a gzip bomb fails the body at the cap', async () => {
    const result = await open().stream(`${server.origin}/gzip-bomb`);
    let bytes = 0;
    const error = await (async () => {
      try {
        for await (const chunk of result.body) bytes += (chunk as Buffer).length;
      } catch (failure) {
        return failure;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'body-too-large' });
    // What was handed out before the cap is at most the cap.
    expect(bytes).toBeLessThanOrEqual(CAP);
    expect(bytes).toBeGreaterThan(0);
  });

  it('refuses a declared Content-Length over the cap before reading', async () => {
    await expect(open().stream(`${server.origin}/declared-too-large`)).rejects.toMatchObject({ reason: 'body-too-large' });
  });

  it('destroying the body cuts the download: the server sees its response closed unfinished', async () => {
    // No request timeout to end it instead.
    const result = await open({ timeouts: { requestMs: 600_000 } }).stream(`${server.origin}/endless`);
    const iterator = result.body[Symbol.asyncIterator]();
    await iterator.next();
    result.body.destroy();
    expect(await holds.get('/endless')?.closed).toEqual({ finished: false });
  });

  it('an abort signal fails the body with its reason and cuts the download', async () => {
    const controller = new AbortController();
    const result = await open({ timeouts: { requestMs: 600_000 } }).stream(`${server.origin}/endless`, { signal: controller.signal });
    const failure = failureOf(result.body);
    const reason = new Error('stop reading');
    controller.abort(reason);
    expect(await failure).toBe(reason);
    expect(await holds.get('/endless')?.closed).toEqual({ finished: false });
  });

  it('a connection reset mid-body fails the body with a RetryableFetchError', async () => {
    const result = await open().stream(`${server.origin}/reset-mid-body`);
    const error = await failureOf(result.body);
    expect(error).toBeInstanceOf(RetryableFetchError);
  });

  it('retries a 503 before handing out a body, telling beforeRetry', async () => {
    const retries: RetryInfo[] = [];
    const result = await open().stream(`${server.origin}/flaky`, {
      attemptHooks: { beforeRetry: (info) => Promise.resolve(void retries.push(info)) },
    });
    expect(result.status).toBe(200);
    expect(result.retries).toBe(1);
    expect(retries).toMatchObject([{ retryCount: 1, status: 503, url: `${server.origin}/flaky` }]);
    expect(await readAll(result.body)).toBe('ok after a retry');
  });

  it('does not wait out a Retry-After over maxRetryAfterMs', async () => {
    const before = server.count('/retry-after-long');
    const error = await open({ retry: { maxRetryAfterMs: 1_000 } })
      .stream(`${server.origin}/retry-after-long`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ status: 503, retryAfterMs: 3_600_000, retries: 0 });
    expect(server.count('/retry-after-long')).toBe(before + 1);
  });

  it('follows redirects through beforeRedirect, and the SSRF guard refuses a hop to loopback', async () => {
    const hops: string[] = [];
    const redirected = await open().stream(`${server.origin}/to-self`, { attemptHooks: { beforeRedirect: (info) => Promise.resolve(void hops.push(info.to)) } });
    expect(redirected.finalUrl).toBe(`${server.origin}/slow-free`);
    expect(hops).toEqual([`${server.origin}/slow-free`]);
    await readAll(redirected.body);

    const resolve = (hostname: string): Promise<readonly string[]> => Promise.resolve(hostname === 'start.test' ? ['127.0.0.1'] : []);
    const onlyStartTest = (address: string, host: string): boolean => host === 'start.test' && address === '127.0.0.1';
    const secrets = server.count('/secret');
    const error = await open({ allowPrivateNetwork: false, resolve, isAddressAllowed: onlyStartTest })
      .stream(`http://start.test:${server.port}/to-literal`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'ssrf' });
    expect(server.count('/secret')).toBe(secrets);
  });
});
