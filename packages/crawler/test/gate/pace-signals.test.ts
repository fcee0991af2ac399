import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFetcher, type Fetcher } from '@crawlq/fetcher';
import { createGroupLimiter, type GroupLimiter, type Outcome, type PaceChange } from '@crawlq/group-limiter';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLoopStalls } from '../../src/gate/event-loop-stalls.js';
import { fetchThroughGate } from '../../src/gate/gated-fetch.js';
import { GroupGate, type GateLimiter } from '../../src/gate/group-gate.js';
import { createGatedFetch } from '../../src/gate/one-off-fetch.js';

// What a gated fetch tells the limiter for adaptive pacing: the
// latency to each response head, and whether a request without a response
// timed out or could not connect; and what the gate does with the change a
// release reports. A real redis-server and a real HTTP server on loopback.

const HOST = '127.0.0.96';
/** Nothing listens here: connections are refused. */
const CLOSED = '127.0.0.97';

let redis: TestRedis;
let server: Server;
let origin: string;
const hanging = new Set<ServerResponse>();

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (path === '/slow') setTimeout(() => response.end('<title>slow</title>'), 150);
    else if (path === '/unavailable') response.writeHead(503).end();
    else if (path === '/silent') hanging.add(response);
    else response.end('<title>ok</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  origin = `http://${HOST}:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const response of hanging) response.destroy();
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

/** A real limiter whose releases are recorded. */
async function recorded(policy: Parameters<GroupLimiter['setPolicy']>[0]): Promise<{ limiter: GateLimiter; outcomes: Outcome[] }> {
  const limiter = createGroupLimiter({ redis: redis.client(), prefix: `signals-{${randomUUID()}}` });
  await limiter.setPolicy(policy);
  const outcomes: Outcome[] = [];
  return {
    outcomes,
    limiter: {
      acquire: (request) => limiter.acquire(request),
      confirmStart: (lease) => limiter.confirmStart(lease),
      abandon: (lease) => limiter.abandon(lease),
      release: (lease, outcome) => {
        outcomes.push(outcome ?? {});
        return limiter.release(lease, outcome);
      },
      reportSlip: (group, lateMs) => limiter.reportSlip(group, lateMs),
      status: (group) => limiter.status(group),
    },
  };
}

async function fetchVia(gate: GroupGate, fetcher: Fetcher, url: string): Promise<unknown> {
  return fetchThroughGate(url, { gate, fetcher, groupOf: () => 'signals.test', maxInlineWaitMs: 500, onDenied: () => Promise.reject(new Error('denied')) }).catch(
    (error: unknown) => error,
  );
}

describe('a gated fetch reports what adaptive pacing watches', () => {
  it('the latency to the response head, with the status', async () => {
    const { limiter, outcomes } = await recorded({ defaults: { rate: null, concurrency: 4 } });
    const fetcher = createFetcher({ allowPrivateNetwork: true });
    // A tracker never started: the raw time to the head, whatever the machine's load.
    const raw = { eventLoopStalls: new EventLoopStalls() };
    try {
      await fetchVia(new GroupGate(limiter, raw), fetcher, `${origin}/slow`);
      await fetchVia(new GroupGate(limiter, raw), fetcher, `${origin}/fast`);
    } finally {
      fetcher.close();
    }
    expect(outcomes).toHaveLength(2);
    expect(outcomes[0]).toMatchObject({ status: 200, sent: true });
    // The server held the answer 150 ms; the client cannot have seen it sooner.
    expect(outcomes[0]?.latencyMs).toBeGreaterThanOrEqual(145);
    expect(outcomes[1]?.latencyMs).toBeLessThan(outcomes[0]?.latencyMs ?? 0);
    expect(outcomes.every((outcome) => outcome.failure === undefined)).toBe(true);
  });

  it('leaves out of the latency the stall that held the process up before it saw the head', async () => {
    const { limiter, outcomes } = await recorded({ defaults: { rate: null, concurrency: 4 } });
    const stalls = new EventLoopStalls().start();
    const blocked = async (gate: GroupGate): Promise<void> => {
      const admission = await gate.pass('signals.test', { maxInlineWaitMs: 500 });
      if (!admission.admitted) throw new Error('not admitted');
      admission.lease.markSent();
      // The process is busy for 150 ms (no timer, no socket read can run), as a loaded worker is.
      const until = performance.now() + 150;
      while (performance.now() < until);
      admission.lease.markResponseHead();
      await admission.lease.release({ status: 200 });
    };
    try {
      await blocked(new GroupGate(limiter, { eventLoopStalls: new EventLoopStalls() }));
      await blocked(new GroupGate(limiter, { eventLoopStalls: stalls }));
    } finally {
      stalls.stop();
    }
    // Unstarted, the tracker leaves the whole 150 ms in; started, the stall
    // since its last tick (at most one 20 ms tick before the send) is left out.
    expect(outcomes.map((outcome) => outcome.latencyMs)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(outcomes[0]?.latencyMs).toBeGreaterThanOrEqual(150);
    expect(outcomes[1]?.latencyMs).toBeLessThanOrEqual(20);
  });

  it('no latency from one-off fetches of static files (robots.txt, sitemaps), their status still', async () => {
    const { limiter, outcomes } = await recorded({ defaults: { rate: null, concurrency: 4 } });
    const fetcher = createFetcher({ allowPrivateNetwork: true });
    try {
      await createGatedFetch({ gate: new GroupGate(limiter), fetcher, groupOf: () => 'signals.test' })(`${origin}/slow`);
    } finally {
      fetcher.close();
    }
    expect(outcomes).toEqual([{ status: 200, sent: true }]);
  });

  it('a timeout or a refused connection as a failure, on got retries and on the last attempt alike', async () => {
    const { limiter, outcomes } = await recorded({ defaults: { rate: null, concurrency: 4 } });
    const fetcher = createFetcher({ allowPrivateNetwork: true, timeouts: { responseMs: 200 }, retry: { limit: 1, backoffBaseMs: 1 } });
    try {
      await fetchVia(new GroupGate(limiter), fetcher, `${origin}/silent`);
      const timeouts = outcomes.splice(0);
      expect(timeouts.map((outcome) => outcome.failure)).toEqual(['timeout', 'timeout']);
      expect(timeouts.every((outcome) => outcome.status === undefined && outcome.latencyMs === undefined)).toBe(true);
      await fetchVia(new GroupGate(limiter), fetcher, `http://${CLOSED}:9/`);
      expect(outcomes.map((outcome) => outcome.failure)).toEqual(['network', 'network']);
    } finally {
      fetcher.close();
    }
  });

  it('the gate hands the pace change a release made to its owner', async () => {
    const { limiter } = await recorded({ defaults: { rate: null, concurrency: 4 }, adaptive: { enabled: true } });
    const changes: PaceChange[] = [];
    const gate = new GroupGate(limiter, { onPaceChange: (change) => changes.push(change) });
    const fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 0 } });
    try {
      await fetchVia(gate, fetcher, `${origin}/unavailable`);
    } finally {
      fetcher.close();
    }
    expect(changes).toEqual([{ group: 'signals.test', direction: 'down', from: 1, to: 0.5, cause: '5xx', reason: 'HTTP 503' }]);
  });
});
