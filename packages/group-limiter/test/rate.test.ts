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
 * every instance shares) and, per admission, how long its caller waited after the
 * reply against how long the reply told it to wait.
 */
async function hammer(
  limiters: readonly GroupLimiter[],
  options: { group: string; loops: number; forMs: number },
): Promise<{ starts: number[]; waits: { toldMs: number; waitedMs: number }[] }> {
  const starts: number[] = [];
  const waits: { toldMs: number; waitedMs: number }[] = [];
  const deadline = performance.now() + options.forMs;
  const worker = async (limiter: GroupLimiter): Promise<void> => {
    while (performance.now() < deadline) {
      const admission = await limiter.acquire({ group: options.group, leaseId: randomUUID(), maxInlineWaitMs: 250 });
      if (admission.admitted) {
        starts.push(admission.startAt);
        const repliedAt = performance.now();
        await sleep(admission.startInMs);
        waits.push({ toldMs: admission.startInMs, waitedMs: performance.now() - repliedAt });
        await limiter.release(admission.lease, { status: 200 });
      } else {
        // Shorter than the slot we were given: hammer the gate harder than a real worker would.
        await sleep(Math.min(admission.retryInMs, 30));
      }
    }
  };
  await Promise.all(limiters.flatMap((limiter) => Array.from({ length: options.loops }, () => worker(limiter))));
  return { starts, waits };
}

describe('GCRA pacing across instances', () => {
  it('5 per 1000 ms, burst 1: never more than 5 starts in any 1000 ms window', async () => {
    const limiters = await fleet(3, { defaults: { rate: { max: 5, durationMs: 1000 }, burst: 1, concurrency: null } });
    const { starts, waits } = await hammer(limiters, { group: 'paced.test', loops: 3, forMs: 4000 });
    // The safety margin (25 ms) leaves room beyond the window: check 1020 ms, not just 1000.
    expect(maxInWindow(starts, 1020)).toBeLessThanOrEqual(5);
    expect(starts.length).toBeGreaterThanOrEqual(15);
    // Burst 1 means evenly spaced: starts T' = 205 ms apart.
    const sorted = [...starts].sort((a, b) => a - b);
    const gaps = sorted.slice(1).map((t, i) => t - sorted[i]!);
    expect(Math.min(...gaps)).toBeGreaterThan(204.9);
    // The callers were told to wait for their slots and did (never early; a
    // loaded event loop only makes them later, which no window count can bound).
    expect(waits.filter((wait) => wait.toldMs > 0).length).toBeGreaterThan(0);
    expect(waits.filter((wait) => wait.waitedMs < wait.toldMs - 1)).toEqual([]);
  });

  it("tells each admitted start the earliest the group's next can be: no later start came before it, and its burst is allowed for", async () => {
    for (const burst of [1, 3]) {
      const group = `next-${burst}.test`;
      const [limiter] = await fleet(1, { defaults: { rate: { max: 5, durationMs: 1000 }, burst, concurrency: null } });
      const admitted: { startAt: number; askedAt: number; nextStartAt: number | undefined }[] = [];
      while (admitted.length < 8) {
        const admission = await limiter!.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 1000 });
        if (!admission.admitted) throw new Error(`${group}: a start within a second was denied`);
        admitted.push({ startAt: admission.startAt, askedAt: admission.lease.admittedAt ?? Number.NaN, nextStartAt: admission.nextStartAt });
        // Each start is made before the next is asked for, as a job's URLs are.
        await sleep(admission.startInMs);
        await limiter!.release(admission.lease, { status: 200 });
      }
      for (let i = 1; i < admitted.length; i += 1) {
        const [before, start] = [admitted[i - 1]!, admitted[i]!];
        expect(before.nextStartAt, `${group} start ${i}`).toBeDefined();
        // Never before the hint; on it (or at once, when the hint is past) with no one else asking.
        expect(start.startAt, `${group} start ${i}`).toBeGreaterThanOrEqual(before.nextStartAt!);
        expect(start.startAt - Math.max(before.nextStartAt!, start.askedAt), `${group} start ${i}`).toBeLessThan(5);
      }
      // With a burst of 3 the first starts go together: the hint says so instead of an interval each.
      if (burst === 3) expect(admitted[1]!.startAt - admitted[0]!.startAt).toBeLessThan(100);
    }
    // A group without a rate keeps no spacing: no hint.
    const [unpaced] = await fleet(1, { defaults: { rate: null, concurrency: null } });
    const free = await unpaced!.acquire({ group: 'free.test', leaseId: randomUUID() });
    expect(free.admitted && free.nextStartAt).toBeUndefined();
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
