import { setTimeout as sleep } from 'node:timers/promises';
import { createFetcher, warmUpFetcher } from '@crawlq/fetcher';
import { createGroupLimiter, type LimitPolicyInput } from '@crawlq/group-limiter';
import { maxCertainlyInWindow, startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchThroughGate } from '../../src/gate/gated-fetch.js';
import { startArrivalServer, type HostArrival, type ArrivalServer } from '../support/arrival-server.js';
import { GroupGate } from '../../src/gate/group-gate.js';

// A request the gate admitted on time can still leave late: the process
// stalls, or the caller makes a round trip, between the admission and the
// socket. Here every start is reserved well ahead, and the third one admitted
// stalls 80 ms right after its admission (well over the safety margin, yet
// short enough that the starts reserved after it fill the rest of its window),
// as a worker's cold first request once did, while the others go at once.
// Judged at the server: the starts it saw, in any window, never exceed the
// limit. (Without the check before the socket, 11 arrived within a second.)
const RATE = 10;
const STALL_MS = 80;
const STALLED = 3;

let redis: TestRedis;
let server: ArrivalServer;
let port: number;
let arrivals: HostArrival[];

beforeAll(async () => {
  redis = await startTestRedis();
  server = await startArrivalServer('127.0.0.72');
  ({ port, arrivals } = server);
});
afterAll(async () => {
  await server.close();
  await redis.stop();
});

/** `count` fetches of `urlOf(i)` at once; the first one admitted stalls after its admission. Resolves to their statuses. */
async function crawlWithStalls(policy: LimitPolicyInput, prefix: string, count: number, urlOf: (i: number) => string): Promise<number[]> {
  const limiter = createGroupLimiter({ redis: redis.client(), prefix: `${prefix}-{g}` });
  await limiter.setPolicy(policy);
  // Every name is the test server (the server level counts them by that address).
  const gate = new GroupGate(limiter, { addressOf: () => Promise.resolve('127.0.0.72') });
  const fetcherOptions = { allowPrivateNetwork: true, resolve: () => Promise.resolve(['127.0.0.72']), retry: { limit: 0 } };
  // As a worker does: only the planned stall may make a start late, not this process's cold first request.
  await warmUpFetcher(fetcherOptions);
  const fetcher = createFetcher(fetcherOptions);
  let admitted = 0;
  const stallOnce = (): Promise<void> => {
    admitted += 1;
    return admitted === STALLED ? sleep(STALL_MS).then(() => undefined) : Promise.resolve();
  };
  try {
    return await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const { response } = await fetchThroughGate(urlOf(i), {
          gate,
          fetcher,
          groupOf: (target) => new URL(target).hostname,
          // Long enough that every start is reserved ahead, before the stalled one goes out.
          maxInlineWaitMs: 5_000,
          // Awaited between the admission and the request: a stall the gate did not see coming.
          onFirstAdmitted: stallOnce,
          onDenied: (denial) => sleep(denial.retryInMs),
        });
        return response.status;
      }),
    );
  } finally {
    fetcher.close();
  }
}

describe('a start that goes late after its admission', () => {
  it('does not crowd the next starts of its group at the server', { timeout: 60_000 }, async () => {
    arrivals.length = 0;
    const count = 25;
    const statuses = await crawlWithStalls({ defaults: { rate: { max: RATE, durationMs: 1000 }, concurrency: null } }, 'late-group', count, (i) => `http://one.late.test:${port}/${i}`);
    expect(statuses).toEqual(Array.from({ length: count }, () => 200));
    // Each page once...
    expect(arrivals.length).toBe(count);
    // ...and never more than the group's rate in any second, stalls or not.
    expect(maxCertainlyInWindow(arrivals, 1000)).toBeLessThanOrEqual(RATE);
  });

  it('does not crowd the next starts of its server, whose names are other groups', { timeout: 60_000 }, async () => {
    arrivals.length = 0;
    const count = 25;
    const statuses = await crawlWithStalls(
      { defaults: { rate: { max: 50, durationMs: 1000 }, concurrency: null }, servers: { defaults: { rate: { max: RATE, durationMs: 1000 } } } },
      'late-server',
      count,
      (i) => `http://n${i}.late.test:${port}/`,
    );
    expect(statuses).toEqual(Array.from({ length: count }, () => 200));
    expect(new Set(arrivals.map((arrival) => arrival.host)).size).toBe(count);
    expect(maxCertainlyInWindow(arrivals, 1000)).toBeLessThanOrEqual(RATE);
  });
});
