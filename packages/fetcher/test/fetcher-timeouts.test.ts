import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startFullListener } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, RetryableFetchError } from '../src/index.js';
import type { Fetcher, FetcherOptions } from '../src/index.js';
import { startServer, type TestServer } from './test-server.js';

// Each phase's timeout is tested alone against a real loopback server that
// stalls in exactly that phase: the phase under test gets a short timeout,
// every other one a long one, so only the right timer can end the fetch.
// got makes one attempt (retry limit 0): the bound is about one timeout.
//
// The bounds are generous on purpose: this machine is shared and loaded. A
// phase timeout of 300 ms must end the fetch well before the 20 s that every
// other phase is given; 10 s leaves the loaded event loop room and still
// proves the short timer fired, not a long one.
const SHORT_MS = 300;
const LONG_MS = 20_000;
const BOUND_MS = 10_000;
const LONG = { lookupMs: LONG_MS, connectMs: LONG_MS, responseMs: LONG_MS, requestMs: LONG_MS };

let healthy: TestServer;
const fetchers: Fetcher[] = [];
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  healthy = await startServer((_req, res) => res.end('ok'));
});

afterEach(() => {
  for (const fetcher of fetchers.splice(0)) fetcher.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

afterAll(async () => {
  await healthy.close();
});

function open(timeouts: FetcherOptions['timeouts'], options: FetcherOptions = {}): Fetcher {
  const fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 0 }, ...options, timeouts: { ...LONG, ...timeouts } });
  fetchers.push(fetcher);
  return fetcher;
}

/** The fetch's error and how long it took to come. */
async function failure(run: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await run();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('the fetch succeeded');
}

/** A timeout of the named phase, after one attempt, within the bound. */
function expectPhaseTimeout(failed: { error: unknown; ms: number }, phase: string): void {
  const { error, ms } = failed;
  expect(error).toBeInstanceOf(RetryableFetchError);
  expect(error).toMatchObject({ failureReason: 'timeout', code: 'ETIMEDOUT', retries: 0 });
  expect((error as Error).message).toMatch(/^timeout: /);
  expect((error as Error).message).toContain(phase);
  // Timers never fire early; the 1 ms is performance.now()'s rounding against the timer's clock.
  expect(ms).toBeGreaterThanOrEqual(SHORT_MS - 1);
  expect(ms).toBeLessThan(BOUND_MS);
}

/** The same fetcher still works: a stalled host leaves nothing stuck behind. */
async function expectStillFetches(fetcher: Fetcher): Promise<void> {
  const result = await fetcher.fetch(`${healthy.origin}/after`);
  expect(result.status).toBe(200);
  expect(result.body.toString()).toBe('ok');
}

/** A raw TCP server on 127.0.0.1 that accepts and keeps every connection, and records the bytes it got. */
async function silentTcpServer(): Promise<{ port: number; accepted: () => number; received: () => Buffer; closedByPeer: () => number }> {
  const sockets = new Set<net.Socket>();
  const chunks: Buffer[] = [];
  let accepted = 0;
  let closedByPeer = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closedByPeer += 1;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    received: () => Buffer.concat(chunks),
    closedByPeer: () => closedByPeer,
  };
}

describe('per-phase timeouts, one phase at a time against a real loopback server', () => {
  it('lookup: a resolver that never answers fails the fetch as a DNS lookup timeout; nothing is connected to', async () => {
    const asked: string[] = [];
    const server = await silentTcpServer();
    const fetcher = open({ lookupMs: SHORT_MS }, { resolve: (hostname) => {
      asked.push(hostname);
      return new Promise<readonly string[]>(() => undefined);
    } });
    const failed = await failure(() => fetcher.fetch(`http://never-answers.test:${server.port}/`));
    expectPhaseTimeout(failed, 'DNS lookup');
    expect(asked).toEqual(['never-answers.test']);
    expect(server.accepted()).toBe(0);
    await expectStillFetches(fetcher);
  });

  it('connect: a listener whose accept queue is full never completes the handshake; the fetch fails as a TCP connect timeout', async () => {
    const { port, held, close } = await startFullListener();
    cleanups.push(close);
    const fetcher = open({ connectMs: SHORT_MS });
    const failed = await failure(() => fetcher.fetch(`http://127.0.0.1:${port}/`));
    expectPhaseTimeout(failed, 'TCP connect');
    // The connections that filled the queue are still there: the queue stayed full throughout.
    expect(held.every((socket) => !socket.destroyed)).toBe(true);
    await expectStillFetches(fetcher);
  });

  it('TLS: a server that accepts and never speaks TLS fails an https fetch as a TLS handshake timeout after it got the ClientHello', async () => {
    const server = await silentTcpServer();
    const fetcher = open({ connectMs: SHORT_MS });
    const failed = await failure(() => fetcher.fetch(`https://127.0.0.1:${server.port}/`));
    expectPhaseTimeout(failed, 'TLS handshake');
    expect(server.accepted()).toBe(1);
    // A TLS record of type handshake (22) opened the exchange: the ClientHello.
    expect(server.received()[0]).toBe(0x16);
    await expectStillFetches(fetcher);
  });

  it('first byte: a server that reads the request and never answers fails the fetch as a time-to-first-byte timeout', async () => {
    const server = await startServer(() => undefined);
    cleanups.push(() => void server.close());
    const fetcher = open({ responseMs: SHORT_MS });
    const failed = await failure(() => fetcher.fetch(`${server.origin}/never`));
    expectPhaseTimeout(failed, 'time to first byte');
    expect(server.count('/never')).toBe(1);
    await expectStillFetches(fetcher);
  });

  describe('whole request: a body trickled forever', () => {
    let trickling: TestServer;
    const sent = new Map<string, number>();
    const closed = new Set<string>();

    beforeAll(async () => {
      trickling = await startServer((req, res) => {
        const path = req.url ?? '/';
        res.writeHead(200, { 'content-type': 'text/plain' });
        sent.set(path, 0);
        const timer = setInterval(() => {
          res.write('.');
          sent.set(path, (sent.get(path) ?? 0) + 1);
        }, 50);
        res.on('close', () => {
          clearInterval(timer);
          closed.add(path);
        });
      });
    });

    afterAll(async () => {
      await trickling.close();
    });

    it('fetch(): fails as a whole-request timeout while the body is read, and the connection is closed', async () => {
      const fetcher = open({ requestMs: 1_000 });
      const failed = await failure(() => fetcher.fetch(`${trickling.origin}/fetch`));
      expectPhaseTimeout(failed, 'whole request');
      expect((failed.error as Error).message).toContain('reading an HTTP 200 response');
      expect(failed.ms).toBeGreaterThanOrEqual(1_000 - 1);
      expect(trickling.count('/fetch')).toBe(1);
      expect(sent.get('/fetch') ?? 0).toBeGreaterThan(0);
      await expect.poll(() => closed.has('/fetch'), { timeout: BOUND_MS }).toBe(true);
      await expectStillFetches(fetcher);
    });

    it('stream(): the body fails as a whole-request timeout, and the connection is closed', async () => {
      const fetcher = open({ requestMs: 1_000 });
      const started = performance.now();
      const result = await fetcher.stream(`${trickling.origin}/stream`);
      expect(result.status).toBe(200);
      const failed = await failure(async () => {
        for await (const _chunk of result.body) {
          // Read everything until the timeout ends it.
        }
      });
      expectPhaseTimeout({ ...failed, ms: performance.now() - started }, 'whole request');
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_000 - 1);
      expect(trickling.count('/stream')).toBe(1);
      await expect.poll(() => closed.has('/stream'), { timeout: BOUND_MS }).toBe(true);
      await expectStillFetches(fetcher);
    });
  });
});
