import { setTimeout as sleep } from 'node:timers/promises';
import { createFetcher, warmUpFetcher } from '@crawlq/fetcher';
import { createGroupLimiter, type LimitPolicyInput } from '@crawlq/group-limiter';
import { ArrivalClock, maxCertainlyInWindow, startTestRedis, type TestRedis } from '@crawlq/testing';
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
// A loaded machine may also stall this process after a start's last check,
// on its way to the socket: the gate counts that start as slipped and moves
// the pacing back, but starts reserved before can come closer to it. So when
// this process's loop stalled (the planned stall is a timer, not a stall),
// each slip of another group than the stalled one allows one start more; a
// run whose loop never stalled is held to the limit exactly.
const RATE = 10;
const STALL_MS = 80;
const STALLED = 3;
/**
 * A loop stall this long, while the fetches ran, is the load's (quiet runs here: 9-23 ms
 * without a tick) and can make a start slip past its allowance after its last check.
 */
const LOAD_STALL_MS = 40;

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

/**
 * `count` fetches of `urlOf(i)` at once; the STALLED-th one admitted stalls after its admission.
 * Resolves to their statuses and to the starts the gate counted as slipped in groups other than the stalled
 * one's, when this process's loop stalled meanwhile (else 0: no slip was the load's).
 */
async function crawlWithStalls(policy: LimitPolicyInput, prefix: string, count: number, urlOf: (i: number) => string): Promise<{ statuses: number[]; slippedElsewhere: number }> {
  const limiter = createGroupLimiter({ redis: redis.client(), prefix: `${prefix}-{g}` });
  await limiter.setPolicy(policy);
  // Every name is the test server (the server level counts them by that address).
  const gate = new GroupGate(limiter, { addressOf: () => Promise.resolve('127.0.0.72') });
  const fetcherOptions = { allowPrivateNetwork: true, resolve: () => Promise.resolve(['127.0.0.72']), retry: { limit: 0 } };
  // As a worker does: only the planned stall may make a start late, not this process's cold first request.
  await warmUpFetcher(fetcherOptions);
  const fetcher = createFetcher(fetcherOptions);
  let admitted = 0;
  let stalledGroup: string | undefined;
  const groupOf = (target: string): string => new URL(target).hostname;
  const stallOnce = (i: number): Promise<void> => {
    admitted += 1;
    if (admitted !== STALLED) return Promise.resolve();
    stalledGroup = groupOf(urlOf(i));
    return sleep(STALL_MS).then(() => undefined);
  };
  const loop = new ArrivalClock();
  try {
    const statuses = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const { response } = await fetchThroughGate(urlOf(i), {
          gate,
          fetcher,
          groupOf,
          // Long enough that every start is reserved ahead, before the stalled one goes out.
          maxInlineWaitMs: 5_000,
          // Awaited between the admission and the request: a stall the gate did not see coming.
          onFirstAdmitted: () => stallOnce(i),
          onDenied: (denial) => sleep(denial.retryInMs),
        });
        return response.status;
      }),
    );
    const loadStalled = loop.longestGapMs >= LOAD_STALL_MS;
    const others = [...new Set(Array.from({ length: count }, (_, i) => groupOf(urlOf(i))))].filter((group) => group !== stalledGroup);
    const slipped = await Promise.all(others.map(async (group) => (await limiter.status(group)).slippedStarts));
    return { statuses, slippedElsewhere: loadStalled ? slipped.reduce((sum, one) => sum + one, 0) : 0 };
  } finally {
    loop.stop();
    fetcher.close();
  }
}

describe('a start that goes late after its admission', () => {
  it('does not crowd the next starts of its group at the server', { timeout: 60_000 }, async () => {
    arrivals.length = 0;
    const count = 25;
    const { statuses } = await crawlWithStalls({ defaults: { rate: { max: RATE, durationMs: 1000 }, concurrency: null } }, 'late-group', count, (i) => `http://one.late.test:${port}/${i}`);
    expect(statuses).toEqual(Array.from({ length: count }, () => 200));
    // Each page once...
    expect(arrivals.length).toBe(count);
    // ...and never more than the group's rate in any second, stalls or not. (One group: a
    // slip of its own cannot be told apart from the planned stall's, so none is allowed.)
    expect(maxCertainlyInWindow(arrivals, 1000)).toBeLessThanOrEqual(RATE);
  });

  it('does not crowd the next starts of its server, whose names are other groups', { timeout: 60_000 }, async () => {
    arrivals.length = 0;
    const count = 25;
    const { statuses, slippedElsewhere } = await crawlWithStalls(
      { defaults: { rate: { max: 50, durationMs: 1000 }, concurrency: null }, servers: { defaults: { rate: { max: RATE, durationMs: 1000 } } } },
      'late-server',
      count,
      (i) => `http://n${i}.late.test:${port}/`,
    );
    expect(statuses).toEqual(Array.from({ length: count }, () => 200));
    expect(new Set(arrivals.map((arrival) => arrival.host)).size).toBe(count);
    expect(maxCertainlyInWindow(arrivals, 1000), `${slippedElsewhere} starts of other groups slipped after their last check`).toBeLessThanOrEqual(RATE + slippedElsewhere);
  });
});
