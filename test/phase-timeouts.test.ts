import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDeadLetterAdmin, type DeadLetterAdmin } from '@crawlq/dead-letter';
import { type FullListener, startFullListener, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from './support/fleet.js';
import { readRecords } from './support/records.js';

// A worker crawls four hosts that each stall in one phase of a request: the
// TCP handshake never completes, TLS is never spoken, the response never
// starts, the body trickles forever. Each job fails with reason `timeout`
// and a message naming its phase, reaches the dead-letter queue after its one
// attempt, and the same worker then crawls a healthy page. A lookup that
// never answers cannot be staged for a worker process (it resolves through
// the system's resolver); the fetcher's own tests cover it with an injected one.

const NAMESPACE = 'phase-timeouts';
// Each phase timeout is 1 s and the whole request 3 s; no attempt may take
// longer than the 3 s it can last. The bound below runs from the enqueue
// command's start (a process of its own, seconds on a loaded machine) to the
// fourth dead letter: generous on purpose (a run beside another e2e file took
// 35 s for the whole test), the phase in each message says which timer fired.
const BOUND_MS = 60_000;

let redis: TestRedis;
let full: FullListener;
const closers: (() => void)[] = [];

interface Stall {
  readonly url: string;
  readonly phase: string;
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Accepts connections and never says a word; remembers whether a TLS ClientHello came. */
async function silentServer(): Promise<{ port: number; sawClientHello: () => boolean }> {
  let clientHello = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      if (chunk[0] === 0x16) clientHello = true;
    });
  });
  const port = await listen(server);
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { port, sawClientHello: () => clientHello };
}

/** An HTTP server: `/never` reads the request and never answers, `/trickle` sends a byte every 100 ms forever, `/ok` answers. */
async function httpServer(): Promise<{ port: number; seen: string[]; closed: Set<string> }> {
  const seen: string[] = [];
  const closed = new Set<string>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push(path);
    res.on('close', () => closed.add(path));
    if (path === '/never') return;
    if (path === '/trickle') {
      res.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>fine</body></html>');
  });
  const port = await listen(server);
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port, seen, closed };
}

beforeAll(async () => {
  redis = await startTestRedis();
  full = await startFullListener();
});

afterAll(async () => {
  for (const close of closers.splice(0)) close();
  full.close();
  await redis.stop();
});

describe('a stall in each phase of a request', () => {
  let fleet: Fleet;
  let deadLetters: DeadLetterAdmin;

  afterAll(async () => {
    await fleet.stop();
    await deadLetters.close();
  });

  it('dead-letters each job with reason timeout and its phase, within a bound, and the worker goes on crawling', { timeout: 180_000 }, async () => {
    const tls = await silentServer();
    const site = await httpServer();
    const stalls: Stall[] = [
      { url: `http://127.0.0.1:${full.port}/connect`, phase: 'TCP connect' },
      { url: `https://127.0.0.1:${tls.port}/tls`, phase: 'TLS handshake' },
      { url: `http://127.0.0.1:${site.port}/never`, phase: 'time to first byte' },
      { url: `http://127.0.0.1:${site.port}/trickle`, phase: 'whole request' },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-phases-'));
    // The producer's flags (the crawl's settings), then the worker's own.
    const flags = [
      '--namespace', NAMESPACE, '--allow-private-network', '--ignore-robots', '--attempts', '1', '--fetch-retries', '0',
      '--max-depth', '0', '--rate', 'none', '--domain-concurrency', '4',
      '--connect-timeout', '1s', '--response-timeout', '1s', '--request-timeout', '3s',
    ];
    fleet = new Fleet({ redisUrl: redis.url, dir, flags: [...flags, '--concurrency', '4', '--grace-period', '2s', '--state-dir', join(dir, 'state')] });
    deadLetters = createDeadLetterAdmin({ connection: { url: redis.url }, namespace: NAMESPACE });
    await fleet.start();

    const started = performance.now();
    const enqueued = await fleet.cli(['enqueue', ...stalls.map((stall) => stall.url), ...flags]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await waitFor(async () => ((await deadLetters.count()) >= stalls.length ? true : undefined), { timeoutMs: BOUND_MS, what: 'four dead letters' });
    expect(performance.now() - started).toBeLessThan(BOUND_MS);

    const entries = await deadLetters.list();
    expect(entries.map((entry) => entry.url).sort()).toEqual(stalls.map((stall) => stall.url).sort());
    for (const stall of stalls) {
      const entry = entries.find((candidate) => candidate.url === stall.url);
      expect(entry, stall.url).toMatchObject({ reason: 'timeout', attempts: 1 });
      expect(entry?.message, stall.url).toContain(stall.phase);
    }
    // What each server saw: a ClientHello, the request for /never and /trickle, and the client closing both.
    expect(tls.sawClientHello()).toBe(true);
    expect(site.seen.filter((path) => path === '/never' || path === '/trickle').sort()).toEqual(['/never', '/trickle']);
    await waitFor(() => (site.closed.has('/never') && site.closed.has('/trickle') ? true : undefined), { timeoutMs: 10_000, what: 'the stalled requests closed' });
    // The handshake never completed: the queue stayed full with the held connections.
    expect(full.held.every((socket) => !socket.destroyed)).toBe(true);

    // The same worker is alive and crawls on.
    const ok = `http://127.0.0.1:${site.port}/ok`;
    const more = await fleet.cli(['enqueue', ok, ...flags]);
    expect(more.code, more.stderr).toBe(0);
    const record = await waitFor(() => readRecords(fleet.resultFiles()[0]!).find((candidate) => candidate.url === ok), { timeoutMs: 30_000, what: 'a record of /ok' });
    expect(record).toMatchObject({ status: 200 });
    expect(fleet.workers[0]?.exitCode).toBeNull();
  });
});
