import type http from 'node:http';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, PermanentFetchError } from '../src/index.js';
import type { Fetcher, FetcherOptions } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

const CAP = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'a');
const ZEROS = Buffer.alloc(64 * 1024);
// 64 MiB of zeros compress to ~64 KiB: small on the wire, 64x the cap once inflated.
const BOMB = gzipSync(Buffer.alloc(64 * 1024 * 1024));

/** What the server managed to send on an endless response before the client hung up. */
interface Drain {
  bytes: number;
  closed: Promise<void>;
}

let server: TestServer;
let fetcher: Fetcher | undefined;
const drains = new Map<string, Drain>();

/** Writes `chunk` into `sink` forever (respecting backpressure) until `res` closes. */
function endless(res: http.ServerResponse, sink: NodeJS.WritableStream, chunk: Buffer, path: string): void {
  const drain: Drain = { bytes: 0, closed: new Promise((resolve) => res.once('close', resolve)) };
  drains.set(path, drain);
  let open = true;
  res.once('close', () => {
    open = false;
  });
  const pump = (): void => {
    while (open) {
      drain.bytes += chunk.length;
      if (!sink.write(chunk)) {
        sink.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = req.url ?? '/';
    switch (url.pathname) {
      case '/exact':
        res.end(Buffer.alloc(CAP, 'b'));
        return;
      case '/one-over':
        // Chunked (no Content-Length), so only counting can catch it.
        res.write(Buffer.alloc(CAP, 'b'));
        res.end('!');
        return;
      case '/declared-too-large':
        // Declares 2x the cap, then trickles: refused from the header, not after the body.
        res.writeHead(200, { 'content-length': String(2 * CAP) });
        res.write(CHUNK);
        drains.set(path, { bytes: CHUNK.length, closed: new Promise((resolve) => res.once('close', resolve)) });
        return;
      case '/endless':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        endless(res, res, CHUNK, path);
        return;
      case '/bomb':
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(BOMB.length) });
        res.end(BOMB);
        return;
      case '/endless-bomb': {
        res.writeHead(200, { 'content-encoding': 'gzip' });
        const gzip = createGzip();
        gzip.pipe(res);
        endless(res, gzip, ZEROS, path);
        res.once('close', () => gzip.destroy());
        return;
      }
      case '/redirect-with-endless-body':
        res.writeHead(302, { location: '/small' });
        endless(res, res, CHUNK, path);
        return;
      case '/redirect-with-body':
        // A chunked 200 KiB redirect body, sent in pieces.
        res.writeHead(302, { location: '/small' });
        for (let i = 0; i < 4; i++) res.write(Buffer.alloc(50 * 1024, 'r'));
        setTimeout(() => res.end(), 20);
        return;
      case '/small':
        res.end('small');
        return;
      default:
        res.statusCode = 404;
        res.end();
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
  // A long request timeout: only the cap can end an endless body quickly.
  fetcher = createFetcher({
    allowPrivateNetwork: true,
    maxBodyBytes: CAP,
    timeouts: { requestMs: 20_000 },
    retry: { backoffBaseMs: 10 },
    ...options,
  });
  return fetcher;
}

async function refusal(url: string): Promise<unknown> {
  return open()
    .fetch(url)
    .then(
      () => new Error('fetch resolved'),
      (e: unknown) => e,
    );
}

describe('body size cap', () => {
  it('accepts a body of exactly maxBodyBytes', async () => {
    const result = await open().fetch(`${server.origin}/exact`);
    expect(result.bodyBytes).toBe(CAP);
  });

  it('refuses a chunked body one byte over the cap', async () => {
    const error = await refusal(`${server.origin}/one-over`);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'body-too-large', retryable: false });
  });

  it('refuses a declared Content-Length over the cap without waiting for the body', async () => {
    const path = '/declared-too-large?1';
    const error = await refusal(`${server.origin}${path}`);
    expect(error).toMatchObject({ reason: 'body-too-large' });
    await drains.get(path)?.closed;
  });

  it('stops reading an endless plain body soon after the cap, fetched once', async () => {
    const path = '/endless?1';
    const error = await refusal(`${server.origin}${path}`);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'body-too-large' });
    const drain = drains.get(path);
    await drain?.closed;
    // What socket buffers held on top of the cap; nowhere near "everything".
    expect(drain?.bytes).toBeLessThan(32 * CAP);
    expect(server.count(path)).toBe(1);
  });

  it('refuses a gzip bomb (64 KiB compressed, 64 MiB inflated)', async () => {
    const error = await refusal(`${server.origin}/bomb`);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'body-too-large' });
  });

  it('stops inflating an endless gzip stream soon after the cap', async () => {
    const path = '/endless-bomb?1';
    const error = await refusal(`${server.origin}${path}`);
    expect(error).toMatchObject({ reason: 'body-too-large' });
    const drain = drains.get(path);
    await drain?.closed;
    expect(drain?.bytes).toBeLessThan(1024 * CAP);
  });

  it('caps the body of a redirect response instead of draining it forever', async () => {
    const path = '/redirect-with-endless-body?1';
    const before = server.count('/small');
    const error = await refusal(`${server.origin}${path}`);
    expect(error).toBeInstanceOf(PermanentFetchError);
    expect(error).toMatchObject({ reason: 'body-too-large' });
    const drain = drains.get(path);
    await drain?.closed;
    expect(drain?.bytes).toBeLessThan(32 * CAP);
    expect(server.count('/small')).toBe(before);
  });

  it('drains a finite redirect body first, so the next hop reuses the socket', async () => {
    const f = open();
    const before = server.connections();
    const result = await f.fetch(`${server.origin}/redirect-with-body`);
    expect(result.body.toString()).toBe('small');
    expect(result.redirects).toEqual([`${server.origin}/small`]);
    expect(server.connections() - before).toBe(1);
  });
});

describe('bodyPrefixBytes: keep the first bytes instead of failing', () => {
  it('returns the first bytes of a body over the cap, marked truncated', async () => {
    const result = await open().fetch(`${server.origin}/one-over`, { bodyPrefixBytes: 1000 });
    expect(result.status).toBe(200);
    expect(result.truncated).toBe(true);
    expect(result.body).toEqual(Buffer.alloc(1000, 'b'));
  });

  it('returns a shorter body whole, not truncated', async () => {
    const result = await open().fetch(`${server.origin}/small`, { bodyPrefixBytes: 1000 });
    expect(result).toMatchObject({ status: 200, truncated: false, bodyBytes: 5 });
    expect(result.body.toString()).toBe('small');
  });

  it('stops reading an endless body and an endless gzip stream at the limit', async () => {
    for (const path of ['/endless', '/endless-bomb']) {
      const result = await open().fetch(`${server.origin}${path}`, { bodyPrefixBytes: 100_000 });
      expect(result.truncated, path).toBe(true);
      expect(result.bodyBytes, path).toBe(100_000);
      const drain = drains.get(path);
      await drain?.closed;
      // The server was cut off long before it could send the whole cap.
      expect(drain?.bytes ?? Infinity, path).toBeLessThan(CAP * 16);
      fetcher?.close();
    }
  });

  it('cuts a gzip bomb at the limit after decompression', async () => {
    const result = await open().fetch(`${server.origin}/bomb`, { bodyPrefixBytes: 512_000 });
    expect(result).toMatchObject({ status: 200, truncated: true, bodyBytes: 512_000 });
  });
});
