import { mkdtempSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type CrawlqConfig } from '@crawlq/config';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import { createFetcher } from '@crawlq/fetcher';
import { createGroupLimiter, limiterKeys, type GroupLimiter } from '@crawlq/group-limiter';
import { QUEUE_NAMES } from '@crawlq/queue';
import { gateKeyPrefix, queuePrefix, stateKeyPrefix } from '@crawlq/redis';
import { normalizeUrl, urlFingerprint } from '@crawlq/urls';
import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchThroughGate } from '../../src/gate/gated-fetch.js';
import { GroupGate, type GateLimiter } from '../../src/gate/group-gate.js';
import { type CrawlServices, openCrawlServices, type PageRecord, publishCrawlDefinition } from '@crawlq/crawl-control';
import { type CrawlWorker, startCrawlWorker } from '../../src/index.js';

// Every way a job can end must give its group's concurrency slot back at once
//. Slots are leases of 60 s here, so expiry cannot be what frees one:
// within BOUND_MS of the job's end, the group's in-flight count and its lease
// set must both be 0 again. A real redis-server, a real worker, and a raw TCP
// server on loopback (node:http cannot send a `000` status line or reset a
// connection halfway through a body).

const HOST = '127.0.0.93';
/** Nothing listens here: connections are refused. */
const CLOSED_HOST = '127.0.0.95';
const LEASE_TIME = '60s';
const BOUND_MS = 500;

let redis: TestRedis;
let server: net.Server;
let port: number;
let origin: string;
const sockets = new Set<net.Socket>();
/** Requests the server saw, per path. */
const hits = new Map<string, number>();
/** What /robots.txt answers in the case running: 404, a reset connection, a `000` status line, or `Disallow: /private`. */
type RobotsMode = 'none' | 'reset' | '000' | 'disallow-private';
let robotsMode: RobotsMode = 'none';

const page = (body: string): string => `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
const redirect = (location: string): string => `HTTP/1.1 302 Found\r\nLocation: ${location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;

function answer(socket: net.Socket, path: string, count: number): void {
  switch (path) {
    case '/robots.txt':
      if (robotsMode === 'reset') socket.resetAndDestroy();
      else if (robotsMode === '000') socket.end('HTTP/1.1 000 Weird\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
      else if (robotsMode === 'disallow-private') socket.end(page('User-agent: *\nDisallow: /private\n'));
      else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    case '/page':
      socket.end(page('<title>page</title><a href="/next">next</a>'));
      return;
    case '/next':
      socket.end(page('<title>next</title>'));
      return;
    case '/weird':
      socket.end('HTTP/1.1 000 Weird\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
      return;
    case '/reset':
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<title>cut');
      setTimeout(() => socket.resetAndDestroy(), 20);
      return;
    case '/big':
      socket.end(page(`<title>big</title>${'x'.repeat(200_000)}`));
      return;
    case '/bad-gzip':
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: 15\r\nConnection: close\r\n\r\nnot gzip at all');
      return;
    case '/unavailable':
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    case '/silent':
      return; // never answers: the response timeout ends it
    case '/hang':
      // First time: headers and part of the body, then nothing (the worker is stopped meanwhile).
      if (count === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<title>slow');
      else socket.end(page('<title>hang</title>'));
      return;
    case '/redirect-private':
      socket.end(redirect('/private'));
      return;
    case '/redirect-weird':
      socket.end(redirect('/weird'));
      return;
    case '/redirect-away':
      socket.end(redirect('http://127.0.0.94:1/elsewhere'));
      return;
    default:
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  }
}

beforeAll(async () => {
  redis = await startTestRedis();
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const path = head.split(' ')[1] ?? '';
      const count = (hits.get(path) ?? 0) + 1;
      hits.set(path, count);
      answer(socket, path, count);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  port = (server.address() as net.AddressInfo).port;
  origin = `http://${HOST}:${port}`;
});

let services: CrawlServices | undefined;
let worker: CrawlWorker | undefined;
afterEach(async () => {
  await worker?.close(1_000);
  await services?.close();
  worker = undefined;
  services = undefined;
  robotsMode = 'none';
  hits.clear();
  for (const socket of sockets) socket.destroy();
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await redis.stop();
});

function config(flags: Record<string, unknown>): CrawlqConfig {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-lease-'));
  return loadConfig({
    flags: {
      namespace: `lease-${randomUUID()}`,
      out: join(dir, 'out.jsonl'),
      stateDir: dir,
      allowPrivateNetwork: true,
      rate: 'none',
      domainConcurrency: 1,
      leaseTime: LEASE_TIME,
      attempts: 1,
      backoff: '50ms',
      fetchRetries: 0,
      maxDepth: 0,
      concurrency: 1,
      ...flags,
    },
  });
}

/** How a job left the worker, as BullMQ's event stream says it. */
type JobEnd = 'completed' | 'failed' | 'delayed';

/** The crawl queue's event stream: a job's end is read there, since a dead-lettered or completed job may be removed at once. */
const eventsKey = (): string => `${queuePrefix(services!.config.namespace)}:${QUEUE_NAMES.crawl}:events`;

/** The id of the newest event so far: later waits read only what follows. */
async function eventCursor(): Promise<string> {
  const [newest] = await services!.redis.xrevrange(eventsKey(), '+', '-', 'COUNT', 1);
  return newest?.[0] ?? '0-0';
}

/** Polls the event stream until the job of `url` ends one of these ways; returns when that was seen. */
async function jobEnded(
  url: string,
  { ends, since, group, timeoutMs = 20_000 }: { ends: readonly JobEnd[]; since: string; group: string; timeoutMs?: number },
): Promise<{ at: number; failedReason: string | undefined }> {
  const jobId = urlFingerprint(normalizeUrl(url));
  const deadline = Date.now() + timeoutMs;
  let cursor = since;
  for (;;) {
    for (const [id, list] of await services!.redis.xrange(eventsKey(), `(${cursor}`, '+')) {
      cursor = id;
      const fields = new Map<string, string>();
      for (let i = 0; i + 1 < list.length; i += 2) fields.set(list[i]!, list[i + 1]!);
      if (fields.get('jobId') === jobId && (ends as readonly string[]).includes(fields.get('event') ?? '')) {
        return { at: Date.now(), failedReason: fields.get('failedReason') };
      }
    }
    if (Date.now() > deadline) {
      // A slot held since an earlier request of the job blocks the group (concurrency 1): say so.
      const { inFlight } = await slotsOf(group);
      throw new Error(`the job of ${url} did not end as ${ends.join(' or ')} within ${timeoutMs} ms; group ${group} holds ${inFlight} slot(s)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The group's slots as the limiter counts them and as its lease set holds them. */
async function slotsOf(group: string): Promise<{ inFlight: number; leases: number; admitted: number }> {
  const status = await services!.limiter.status(group);
  const leases = await services!.redis.zcard(limiterKeys(gateKeyPrefix(services!.config.namespace)).leases(group));
  return { inFlight: status.inFlight, leases, admitted: status.admitted };
}

/** Polls until the group holds no slot; fails if that is not so by `deadline` (one read of 0 suffices, however late). */
async function expectSlotsFreeBy(group: string, deadline: number): Promise<void> {
  for (;;) {
    const slots = await slotsOf(group);
    if (slots.inFlight === 0 && slots.leases === 0) {
      // A slot was really taken: the case went through the gate.
      expect(slots.admitted).toBeGreaterThan(0);
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`group ${group} still holds ${slots.inFlight} slot(s) (${slots.leases} lease(s)) ${BOUND_MS} ms after the job ended`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function deadLetterReason(namespace: string, url: string): Promise<string | undefined> {
  const deadLetters = createDeadLetterAdmin({ connection: { url: redis.url }, namespace });
  try {
    for (let i = 0; i < 200; i += 1) {
      const entry = (await deadLetters.list()).find((candidate) => candidate.url === url);
      if (entry) return entry.reason;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  } finally {
    await deadLetters.close();
  }
}

interface FailureCase {
  readonly name: string;
  /** The seed; a path on the test server unless a whole URL. */
  readonly seed: string;
  /** The job whose end is watched (default: the seed's). */
  readonly watch?: string;
  readonly flags?: Record<string, unknown>;
  readonly robots?: RobotsMode;
  readonly ends: readonly JobEnd[];
  /** After seeding, before the worker starts. */
  readonly before?: () => Promise<void>;
  /** The dead letter's reason, for failures whose classification this issue fixed. */
  readonly reason?: string;
  readonly message?: RegExp;
}

const url = (seed: string): string => (seed.startsWith('http') ? seed : `${origin}${seed}`);

const cases: FailureCase[] = [
  { name: 'robots.txt fetch fails (connection reset): deferred', seed: '/page', robots: 'reset', ends: ['delayed'] },
  { name: 'robots.txt answers with status line 000: deferred as unreachable', seed: '/page', robots: '000', ends: ['delayed'] },
  {
    name: 'refused by the SSRF guard after DNS (localhost)',
    seed: 'http://localhost:PORT/page',
    flags: { allowPrivateNetwork: false },
    ends: ['failed'],
    reason: 'ssrf',
  },
  { name: 'connection refused', seed: `http://${CLOSED_HOST}:PORT/page`, flags: { ignoreRobots: true, fetchRetries: 1, fetchBackoff: '1ms' }, ends: ['failed'], reason: 'network' },
  { name: 'no response before the response timeout', seed: '/silent', flags: { responseTimeout: '300ms' }, ends: ['failed'], reason: 'timeout' },
  {
    name: 'status line 000',
    seed: '/weird',
    ends: ['failed'],
    reason: 'invalid-status',
    message: /status line 000 is not an HTTP status/,
  },
  {
    name: 'connection reset mid-body',
    seed: '/reset',
    ends: ['failed'],
    reason: 'network',
    message: /ECONNRESET \(reading an HTTP 200 response\)/,
  },
  { name: 'body over --max-body-size', seed: '/big', flags: { maxBodySize: '64kb' }, ends: ['failed'], reason: 'body-too-large' },
  { name: 'body that does not decompress', seed: '/bad-gzip', ends: ['failed'], reason: 'decompression', message: /Z_\w+ \(reading an HTTP 200 response\)/ },
  { name: 'a field selector that does not compile (extractor error)', seed: '/page', flags: { fields: [{ name: 'broken', selector: 'a[[' }] }, ends: ['failed'] },
  {
    // The page's own job fails: a record that cannot be written never completes its job.
    name: 'results file cannot be written (/dev/full)',
    seed: '/page',
    flags: { out: '/dev/full', maxDepth: 1 },
    ends: ['failed'],
  },
  {
    name: 'the frontier cannot admit the links (Redis answers WRONGTYPE)',
    seed: '/page',
    flags: { maxDepth: 1 },
    ends: ['failed'],
    before: async () => {
      // The page budget's counter becomes a hash: the reserve script's GET fails.
      const key = `${stateKeyPrefix(services!.config.namespace)}:admitted`;
      await services!.redis.del(key);
      await services!.redis.hset(key, 'broken', '1');
    },
  },
  { name: 'a redirect to a URL robots.txt disallows: skipped', seed: '/redirect-private', robots: 'disallow-private', ends: ['completed'] },
  { name: 'a redirect out of scope: skipped', seed: '/redirect-away', ends: ['completed'] },
  { name: 'a redirect hop that fails (000 after a same-host redirect)', seed: '/redirect-weird', ends: ['failed'], reason: 'invalid-status' },
  {
    name: "got's retries and the queue's attempt both fail (503)",
    seed: '/unavailable',
    flags: { fetchRetries: 1, fetchBackoff: '1ms', attempts: 2 },
    ends: ['failed'],
    reason: 'http-503',
  },
];

describe('every way a job ends gives its gate slot back at once (lease time 60 s)', () => {
  it.each(cases)('$name', async (spec) => {
    robotsMode = spec.robots ?? 'none';
    const seed = url(spec.seed.replace('PORT', String(port)));
    const watched = spec.watch === undefined ? seed : url(spec.watch);
    const cfg = config(spec.flags ?? {});
    services = await openCrawlServices(cfg, redis.url, { role: 'producer' });
    await publishCrawlDefinition(services, 'test');
    const group = services.frontier.groupOf(seed);
    await services.frontier.addSeeds([seed]);
    await spec.before?.();
    const since = await eventCursor();
    worker = await startCrawlWorker({ config: cfg, redisUrl: redis.url, cli: 'crawlq', log: () => undefined });

    const ended = await jobEnded(watched, { ends: spec.ends, since, group });
    await expectSlotsFreeBy(group, ended.at + BOUND_MS);
    if (spec.message) expect(ended.failedReason).toMatch(spec.message);
    if (spec.reason) expect(await deadLetterReason(cfg.namespace, watched)).toBe(spec.reason);
    if (spec.seed === '/unavailable') expect(hits.get('/unavailable')).toBe(4);
  });
});

describe('a worker that stops mid-job', () => {
  it('interrupts the fetch after the grace period, gives the slot back and puts the job back without using an attempt', async () => {
    const cfg = config({ ignoreRobots: true });
    services = await openCrawlServices(cfg, redis.url, { role: 'producer' });
    await publishCrawlDefinition(services, 'test');
    const seed = `${origin}/hang`;
    const group = services.frontier.groupOf(seed);
    await services.frontier.addSeeds([seed]);
    const since = await eventCursor();
    worker = await startCrawlWorker({ config: cfg, redisUrl: redis.url, cli: 'crawlq', log: () => undefined });
    await waitFor(() => hits.get('/hang') !== undefined, { what: 'the request for /hang', timeoutMs: 30_000, intervalMs: 25 });
    expect(hits.get('/hang')).toBe(1);
    // The body is still being read: the slot is held.
    expect((await slotsOf(group)).inFlight).toBe(1);

    const graceMs = 300;
    const stopAt = Date.now();
    const stopped = worker.close(graceMs);
    worker = undefined;
    const ended = await jobEnded(seed, { ends: ['delayed'], since, group, timeoutMs: 15_000 });
    // Not before the grace period was over.
    expect(ended.at - stopAt).toBeGreaterThanOrEqual(graceMs);
    await expectSlotsFreeBy(group, ended.at + BOUND_MS);
    await stopped;
    const job = await services.queue.getJob(urlFingerprint(normalizeUrl(seed)));
    expect(job?.attemptsMade).toBe(0);
    expect(await job?.getState()).toMatch(/^(delayed|waiting)$/);

    // Nothing lost: the next worker fetches it, as its first attempt.
    const pages: PageRecord[] = [];
    const resumed = await eventCursor();
    worker = await startCrawlWorker({ config: cfg, redisUrl: redis.url, cli: 'crawlq', log: () => undefined, onPage: (record) => pages.push(record) });
    await jobEnded(seed, { ends: ['completed'], since: resumed, group });
    expect(pages).toMatchObject([{ url: seed, status: 200, attempts: 1 }]);
  });
});

describe('a fetch aborted while a retry waits at the gate', () => {
  it('gives back the slot the gate admits after the fetch was over', async () => {
    const limiter: GroupLimiter = createGroupLimiter({ redis: redis.client(), prefix: `lease-{${randomUUID()}}` });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 1 }, leaseMs: 60_000 });
    const controller = new AbortController();
    let acquires = 0;
    let lateAdmission: Promise<unknown> | undefined;
    // The retry's acquire is still on its way to Redis when the abort comes.
    const slowRetry: GateLimiter = {
      acquire: async (request) => {
        acquires += 1;
        if (acquires !== 2) return limiter.acquire(request);
        controller.abort(new Error('stop'));
        lateAdmission = new Promise((resolve) => setTimeout(resolve, 100)).then(() => limiter.acquire(request));
        return lateAdmission as ReturnType<GroupLimiter['acquire']>;
      },
      confirmStart: (lease) => limiter.confirmStart(lease),
      abandon: (lease) => limiter.abandon(lease),
      release: (lease, outcome) => limiter.release(lease, outcome),
      reportSlip: (group, lateMs) => limiter.reportSlip(group, lateMs),
      status: (group) => limiter.status(group),
    };
    const fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 1, backoffBaseMs: 1 } });
    const group = 'retry.test';
    try {
      const failed = await fetchThroughGate(`${origin}/unavailable`, {
        gate: new GroupGate(slowRetry),
        fetcher,
        groupOf: () => group,
        maxInlineWaitMs: 500,
        signal: controller.signal,
        onDenied: () => Promise.reject(new Error('denied')),
      }).catch((error: unknown) => error);
      expect(failed).toMatchObject({ message: 'stop' });
      const endedAt = Date.now();
      expect(acquires).toBe(2);
      // The fetch is over; the gate admits the retry only now.
      expect((await lateAdmission) as { admitted: boolean }).toMatchObject({ admitted: true });
      for (;;) {
        const { inFlight } = await limiter.status(group);
        if (inFlight === 0) break;
        if (Date.now() > endedAt + BOUND_MS) throw new Error(`group ${group} still holds ${inFlight} slot(s) ${BOUND_MS} ms after the fetch ended`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      fetcher.close();
    }
  });
});
