import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, type GroupLimiter, type LimitPolicyInput } from '../src/index.js';
import { maxInWindow, sleep, testPrefix } from './support.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

/** One limiter per connection, as if each ran in its own worker process. */
async function fleet(size: number, policy: LimitPolicyInput): Promise<GroupLimiter[]> {
  const prefix = testPrefix();
  const limiters = Array.from({ length: size }, () => createGroupLimiter({ redis: server.client(), prefix }));
  await limiters[0]!.setPolicy(policy);
  return limiters;
}

/**
 * Every limiter runs `loops` workers that take starts as fast as the gate allows.
 * Returns the reserved start times (Redis now + startInMs, on the Redis clock, which
 * every instance shares) and, for comparison, when the callers actually started.
 */
async function hammer(
  limiters: readonly GroupLimiter[],
  options: { group: string; loops: number; forMs: number },
): Promise<{ starts: number[]; observed: number[] }> {
  const starts: number[] = [];
  const observed: number[] = [];
  const deadline = performance.now() + options.forMs;
  const worker = async (limiter: GroupLimiter): Promise<void> => {
    while (performance.now() < deadline) {
      const admission = await limiter.acquire({ group: options.group, leaseId: randomUUID(), maxInlineWaitMs: 250 });
      if (admission.admitted) {
        starts.push(admission.startAt);
        await sleep(admission.startInMs);
        observed.push(performance.now());
        await limiter.release(admission.lease, { status: 200 });
      } else {
        // Shorter than the slot we were given: hammer the gate harder than a real worker would.
        await sleep(Math.min(admission.retryInMs, 30));
      }
    }
  };
  await Promise.all(limiters.flatMap((limiter) => Array.from({ length: options.loops }, () => worker(limiter))));
  return { starts, observed };
}

describe('GCRA pacing across instances', () => {
  it('5 per 1000 ms, burst 1: never more than 5 starts in any 1000 ms window', async () => {
    const limiters = await fleet(3, { defaults: { rate: { max: 5, durationMs: 1000 }, burst: 1, concurrency: null } });
    const { starts, observed } = await hammer(limiters, { group: 'paced.test', loops: 3, forMs: 4000 });
    // The safety margin (25 ms) leaves room beyond the window: check 1020 ms, not just 1000.
    expect(maxInWindow(starts, 1020)).toBeLessThanOrEqual(5);
    expect(starts.length).toBeGreaterThanOrEqual(15);
    // Burst 1 means evenly spaced: starts T' = 205 ms apart.
    const sorted = [...starts].sort((a, b) => a - b);
    const gaps = sorted.slice(1).map((t, i) => t - sorted[i]!);
    expect(Math.min(...gaps)).toBeGreaterThan(204.9);
    // The callers really waited: their own clocks saw starts spaced too (loose: event-loop noise).
    expect(maxInWindow(observed, 800)).toBeLessThanOrEqual(5);
  });

  it('5 per 1000 ms, burst 3: never more than 7 starts in any 1000 ms window', async () => {
    const limiters = await fleet(3, { defaults: { rate: { max: 5, durationMs: 1000 }, burst: 3, concurrency: null } });
    const { starts } = await hammer(limiters, { group: 'bursty.test', loops: 3, forMs: 4000 });
    expect(maxInWindow(starts, 1020)).toBeLessThanOrEqual(7);
    expect(starts.length).toBeGreaterThanOrEqual(17);
    // The burst is really used: some window holds more than max.
    expect(maxInWindow(starts, 1000)).toBeGreaterThan(5);
  });
});
