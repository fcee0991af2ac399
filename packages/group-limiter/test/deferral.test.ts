import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createGroupLimiter, limiterKeys, type GroupLimiter, type LimiterKeys } from '../src/index.js';
import { testPrefix } from './support.js';

// 1 per 10 s (*.slow.test): slow enough that a loaded machine cannot outlive a slot mid-test.
const SLOW_INTERVAL = 10_500; // 10 000 + max(25, 5% of 10 000)

let server: TestRedis;
let limiter: GroupLimiter;
let inspector: Redis;
let keys: LimiterKeys;
beforeAll(async () => {
  server = await startTestRedis();
  const client = server.client();
  inspector = server.client();
  const prefix = testPrefix();
  keys = limiterKeys(prefix);
  limiter = createGroupLimiter({ redis: client, prefix });
  await limiter.setPolicy({
    defaults: { rate: { max: 5, durationMs: 1000 }, burst: 1, concurrency: null },
    rules: [
      { match: 'unlimited.test', rate: null },
      { match: '*.slow.test', rate: { max: 1, durationMs: 10_000 } },
      { match: 'one-at-a-time.test', rate: null, concurrency: 1 },
    ],
  });
});
afterAll(async () => server.stop());

describe('distinct deferral slots', () => {
  it("gives 50 denied jobs 50 distinct retry times, T' apart", async () => {
    const group = 'backlog.slow.test';
    expect((await limiter.acquire({ group, leaseId: randomUUID() })).admitted).toBe(true);
    const retries: number[] = [];
    const wakeAt: number[] = [];
    const horizon: number[] = [];
    for (let i = 0; i < 50; i += 1) {
      const admission = await limiter.acquire({ group, leaseId: randomUUID() });
      expect(admission).toMatchObject({ admitted: false, reason: 'rate' });
      if (!admission.admitted) {
        retries.push(admission.retryInMs);
        wakeAt.push(performance.now() + admission.retryInMs);
      }
      if (i === 0 || i === 49) horizon.push(Number(await inspector.hget(keys.group(group), 'wakeAt')));
    }
    expect(new Set(retries).size).toBe(50);
    expect(retries[0]).toBeGreaterThan(SLOW_INTERVAL - 1000);
    expect(retries[0]).toBeLessThan(SLOW_INTERVAL + 20);
    // Redis-internal: each denial moved the group's wake horizon by exactly T'.
    expect(horizon[1]! - horizon[0]!).toBeCloseTo(49 * SLOW_INTERVAL, 1);
    // Seen from the caller: each wake time later than the one before (T' apart in Redis,
    // give or take jitter below 20 ms and however long each reply took on a busy machine).
    wakeAt.slice(1).forEach((t, i) => {
      expect(t).toBeGreaterThan(wakeAt[i]!);
    });
  });

  it('spaces concurrency-bound denials too, instead of waking them together', async () => {
    const group = 'one-at-a-time.test';
    expect((await limiter.acquire({ group, leaseId: 'holder' })).admitted).toBe(true);
    const retries: number[] = [];
    let firstHorizon = 0;
    for (let i = 0; i < 20; i += 1) {
      const admission = await limiter.acquire({ group, leaseId: randomUUID() });
      expect(admission).toMatchObject({ admitted: false, reason: 'concurrency' });
      if (!admission.admitted) retries.push(admission.retryInMs);
      if (i === 0) firstHorizon = Number(await inspector.hget(keys.group(group), 'wakeAt'));
    }
    // No hold time measured yet, so the step is the 10 ms minimum: 19 steps of at least 10 ms
    // (more when the calls themselves were slower than 10 ms apart).
    const lastHorizon = Number(await inspector.hget(keys.group(group), 'wakeAt'));
    expect(lastHorizon - firstHorizon).toBeGreaterThanOrEqual(19 * 10 - 0.01);
    expect(retries[0]).toBeGreaterThanOrEqual(10);
  });

  it('admits a short pacing wait inline, reserving the start', async () => {
    const group = 'inline.slow.test';
    const maxInlineWaitMs = SLOW_INTERVAL + 100;
    const first = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs });
    const second = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs });
    const third = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs });
    expect(first).toMatchObject({ admitted: true, startInMs: 0 });
    expect(second.admitted).toBe(true);
    if (first.admitted && second.admitted) {
      expect(second.startInMs).toBeGreaterThan(SLOW_INTERVAL - 1000);
      expect(second.startInMs).toBeLessThanOrEqual(SLOW_INTERVAL + 1);
      expect(second.startAt - first.startAt).toBeCloseTo(SLOW_INTERVAL, 1);
    }
    // Two intervals away is beyond maxInlineWaitMs: deferred instead.
    expect(third).toMatchObject({ admitted: false, reason: 'rate' });
  });
});

describe('reportSlip()', () => {
  it("moves the group's next reservation back by the slip, and counts it", async () => {
    const group = 'slipped.slow.test';
    const maxInlineWaitMs = 3 * SLOW_INTERVAL;
    const first = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs });
    await limiter.reportSlip(group, 700);
    const second = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs });
    expect(first.admitted && second.admitted).toBe(true);
    if (first.admitted && second.admitted) expect(second.startAt - first.startAt).toBeCloseTo(SLOW_INTERVAL + 700, 1);
    expect((await limiter.status(group)).slippedStarts).toBe(1);
  });
});

