import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, GroupLimiterArgumentError, normalizePolicy, type GroupLimiter, type LimitPolicyInput } from '../src/index.js';
import { maxInWindow, pacedLimits, sleep, testPrefix } from './support.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

/** Two limiters on their own connections (two workers) sharing one prefix. */
async function fleet(policy: LimitPolicyInput): Promise<[GroupLimiter, GroupLimiter]> {
  const prefix = testPrefix();
  const a = createGroupLimiter({ redis: server.client(), prefix });
  const b = createGroupLimiter({ redis: server.client(), prefix });
  await a.setPolicy(policy);
  return [a, b];
}

/** Takes starts for `group` as fast as the gate allows for `forMs`; returns the reserved start times (Redis clock). */
async function hammer(limiters: readonly GroupLimiter[], group: string, forMs: number): Promise<number[]> {
  const starts: number[] = [];
  const deadline = performance.now() + forMs;
  const loop = async (limiter: GroupLimiter): Promise<void> => {
    while (performance.now() < deadline) {
      const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 100 });
      if (admission.admitted) {
        starts.push(admission.startAt);
        await sleep(admission.startInMs);
        await limiter.release(admission.lease, { status: 200 });
      } else {
        await sleep(Math.min(admission.retryInMs, 20));
      }
    }
  };
  await Promise.all(limiters.flatMap((limiter) => [loop(limiter), loop(limiter)]));
  return starts.sort((x, y) => x - y);
}

const gaps = (sorted: readonly number[]): number[] => sorted.slice(1).map((t, i) => t - sorted[i]!);

describe('setMinInterval (robots.txt Crawl-delay)', () => {
  it('spaces one group at least 500 ms apart across workers while another keeps the policy pace', async () => {
    // Policy: 20 per second with a burst of 3, i.e. ~51 ms apart and bursts allowed.
    const [a, b] = await fleet({ defaults: { rate: { max: 20, durationMs: 1000 }, burst: 3, concurrency: null } });
    await a.setMinInterval('slow.test', 500);
    const [slow, fast] = await Promise.all([hammer([a, b], 'slow.test', 2200), hammer([a, b], 'fast.test', 2200)]);

    expect(slow.length).toBeGreaterThanOrEqual(4);
    expect(slow.length).toBeLessThanOrEqual(6);
    // No burst either: every start at least the Crawl-delay after the previous one.
    expect(Math.min(...gaps(slow))).toBeGreaterThanOrEqual(499.9);
    // The other group keeps the policy's pace, not the Crawl-delay: many more starts, and
    // within the policy's bound in every second (20, plus the 2 its burst of 3 lets go early).
    expect(fast.length).toBeGreaterThan(25);
    expect(maxInWindow(fast, 1000)).toBeLessThanOrEqual(22);

    const slowStatus = await b.status('slow.test');
    expect(slowStatus.minIntervalMs).toBe(500);
    expect((await b.status('fast.test')).minIntervalMs).toBe(0);
    const listed = await a.list();
    expect(listed.map((status) => [status.group, status.minIntervalMs])).toEqual([
      ['fast.test', 0],
      ['slow.test', 500],
    ]);
  });

  it('paces the release step by the longer interval, capped by maxMinIntervalMs; 0 clears it', async () => {
    const [limiter] = await fleet({
      defaults: { rate: { max: 5, durationMs: 1000 }, burst: 1, concurrency: null },
      safetyMarginMs: 0,
      spacingMargin: 0,
      maxMinIntervalMs: 2000,
    });
    // Shorter than the policy's 200 ms: no effect (it never speeds a group up).
    await limiter.setMinInterval('short.test', 50);
    await limiter.setMinInterval('long.test', 60_000);
    expect((await limiter.status('long.test')).minIntervalMs).toBe(2000);
    expect((await pacedLimits(limiter, ['short.test', 'long.test'])).map((limits) => limits.intervalMs)).toEqual([200, 2000]);

    // A group without a rate limit is paced by its Crawl-delay alone.
    const [unlimited] = await fleet({ defaults: { rate: null, concurrency: null } });
    await unlimited.setMinInterval('crawl-delay.test', 1000);
    expect((await pacedLimits(unlimited, ['crawl-delay.test', 'other.test'])).map((limits) => limits.intervalMs)).toEqual([1000, 0]);

    await unlimited.setMinInterval('crawl-delay.test', 0);
    expect((await unlimited.status('crawl-delay.test')).minIntervalMs).toBe(0);
    expect((await pacedLimits(unlimited, ['crawl-delay.test']))[0]?.intervalMs).toBe(0);
  });

  it('the first start after a Crawl-delay arrives already waits for it', async () => {
    const [limiter] = await fleet({ defaults: { rate: null, concurrency: null } });
    const first = await limiter.acquire({ group: 'late.test', leaseId: 'l1' });
    expect(first.admitted).toBe(true);
    await limiter.setMinInterval('late.test', 800);
    const second = await limiter.acquire({ group: 'late.test', leaseId: 'l2', maxInlineWaitMs: 2000 });
    if (!first.admitted || !second.admitted) throw new Error('expected both admitted');
    expect(second.startAt - first.startAt).toBeGreaterThanOrEqual(799.9);
  });

  it('rejects a negative interval and keeps maxMinIntervalMs in the policy', async () => {
    const [limiter] = await fleet({});
    await expect(limiter.setMinInterval('x.test', -1)).rejects.toBeInstanceOf(GroupLimiterArgumentError);
    expect(normalizePolicy({}).maxMinIntervalMs).toBe(30_000);
    expect(() => normalizePolicy({ maxMinIntervalMs: -5 })).toThrow(/maxMinIntervalMs/);
  });
});
