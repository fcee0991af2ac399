import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, createShardedGroupLimiter, globalShare, limiterKeys, type GroupLimiter, type LimitPolicyInput } from '../src/index.js';
import { maxInWindow, sleep, testPrefix } from './support.js';

// The crawl-wide cap (globalRate) is enforced in the same acquire script as the
// group's limits; these tests read reserved starts on the Redis clock, which every
// limiter shares, so the bounds hold at any speed.
let server: TestRedis;
let inspector: Redis;
beforeAll(async () => {
  server = await startTestRedis();
  inspector = server.client();
});
afterAll(async () => server.stop());

/** The first limiter publishes `policy`; the others are created without one, as workers started without flags. */
async function fleet(size: number, policy: LimitPolicyInput): Promise<{ limiters: GroupLimiter[]; prefix: string }> {
  const prefix = testPrefix();
  const limiters = Array.from({ length: size }, () => createGroupLimiter({ redis: server.client(), prefix }));
  await limiters[0]!.setPolicy(policy);
  return { limiters, prefix };
}

describe('globalRate: a crawl-wide cap on request starts', () => {
  it('keeps every limiter, with or without the cap in its own options, to max starts per window across all groups', { timeout: 60_000 }, async () => {
    const { limiters } = await fleet(3, {
      defaults: { rate: { max: 50, durationMs: 1000 }, burst: 1, concurrency: null },
      globalRate: { max: 10, durationMs: 1000 },
    });
    const groups = ['a.test', 'b.test', 'c.test', 'd.test'];
    const starts: number[] = [];
    const reasons = new Set<string>();
    const deadline = performance.now() + 2_500;
    const loop = async (limiter: GroupLimiter, group: string): Promise<void> => {
      while (performance.now() < deadline) {
        const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 150 });
        if (!admission.admitted) {
          reasons.add(admission.reason);
          await sleep(Math.min(admission.retryInMs, 100));
          continue;
        }
        starts.push(admission.startAt);
        await sleep(admission.startInMs);
        await limiter.release(admission.lease, { status: 200 });
      }
    };
    await Promise.all(limiters.flatMap((limiter) => groups.map((group) => loop(limiter, group))));
    // Twelve loops at up to 50/s per group would start far more than 10/s without the cap.
    expect(starts.length).toBeGreaterThanOrEqual(10);
    expect(maxInWindow(starts, 1000)).toBeLessThanOrEqual(10);
    // Spaced by (1000 + 25) / 10 on the Redis clock, whichever group or limiter took the slot.
    const sorted = [...starts].sort((a, b) => a - b);
    sorted.slice(1).forEach((at, i) => expect(at - sorted[i]!).toBeGreaterThanOrEqual(102.5 - 0.01));
    expect(reasons.has('global-rate')).toBe(true);
    const global = await limiters[2]!.globalStatus();
    expect(global).toMatchObject({ rate: { max: 10, durationMs: 1000 }, paceMs: 102.5, admitted: starts.length });
    expect(global.deferred).toBeGreaterThan(0);
  });

  it('splits the cap over a crawl\'s shards in whole shares: together they hold it in any window', { timeout: 60_000 }, async () => {
    // Three shards, each with its own keys (as in a Redis Cluster, its own slot); groups spread over all three.
    // A cap of 10 gives shares of 4, 3 and 3: thirds of it (3.33 each, spaced 307.5 ms) would let 4 + 4 + 4 start in one second.
    const shardLimiters = Array.from({ length: 3 }, (_, index) => createGroupLimiter({ redis: server.client(), prefix: testPrefix(), shard: { index, count: 3 } }));
    const groups = ['a.test', 'b.test', 'c.test', 'd.test', 'e.test', 'f.test'];
    const shardOf = (group: string) => groups.indexOf(group) % 3;
    const limiter = createShardedGroupLimiter(shardLimiters, shardOf);
    await limiter.setPolicy({ defaults: { rate: { max: 50, durationMs: 1000 }, burst: 1, concurrency: null }, globalRate: { max: 10, durationMs: 1000 } });
    expect([0, 1, 2].map((index) => globalShare(10, index, 3))).toEqual([4, 3, 3]);
    const starts: number[] = [];
    const byShard: number[][] = [[], [], []];
    const deadline = performance.now() + 3_000;
    const loop = async (group: string): Promise<void> => {
      while (performance.now() < deadline) {
        const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 150 });
        if (!admission.admitted) {
          await sleep(Math.min(admission.retryInMs, 100));
          continue;
        }
        starts.push(admission.startAt);
        byShard[shardOf(group)]!.push(admission.startAt);
        await sleep(admission.startInMs);
        await limiter.release(admission.lease, { status: 200 });
      }
    };
    await Promise.all(groups.map(loop));
    expect(starts.length).toBeGreaterThanOrEqual(10);
    // All shards together: at most 10 starts in any second of the Redis clock.
    expect(maxInWindow(starts, 1000)).toBeLessThanOrEqual(10);
    // Each shard: its share, spaced by (1000 + 25) / share, whichever of its groups took the slot.
    byShard.forEach((shardStarts, index) => {
      expect(shardStarts.length).toBeGreaterThan(0);
      const sorted = [...shardStarts].sort((a, b) => a - b);
      sorted.slice(1).forEach((at, i) => expect(at - sorted[i]!).toBeGreaterThanOrEqual(1025 / globalShare(10, index, 3) - 0.01));
    });
    // The crawl-wide view: the cap, the crawl's pace (the shares' rates added up), and every shard's admissions.
    const global = await limiter.globalStatus();
    expect(global).toMatchObject({ rate: { max: 10, durationMs: 1000 }, admitted: starts.length });
    expect(global.paceMs).toBeCloseTo(102.5, 6);
  });

  it("a denial by the cap moves neither the group's pacing nor its wake horizon", async () => {
    const { limiters, prefix } = await fleet(1, {
      defaults: { rate: { max: 5, durationMs: 1000 }, burst: 1, concurrency: null },
      globalRate: { max: 1, durationMs: 10_000 },
    });
    const [limiter] = limiters;
    const keys = limiterKeys(prefix);
    expect((await limiter!.acquire({ group: 'first.test', leaseId: randomUUID() })).admitted).toBe(true);
    const globalTat = await inspector.hget(keys.global, 'tat');
    const denied = await limiter!.acquire({ group: 'second.test', leaseId: randomUUID() });
    expect(denied).toMatchObject({ admitted: false, reason: 'global-rate' });
    if (!denied.admitted) {
      expect(denied.retryInMs).toBeGreaterThan(9_000);
      expect(denied.retryInMs).toBeLessThan(10_100);
    }
    expect(await inspector.hmget(keys.group('second.test'), 'tat', 'wakeAt', 'deferred')).toEqual([null, null, null]);
    expect(await inspector.hget(keys.global, 'tat')).toBe(globalTat);
    expect(Number(await inspector.hget(keys.global, 'wakeAt'))).toBeGreaterThan(Number(globalTat));
    // The group was free: once the cap allows, it starts at once (its own pacing untouched).
    expect((await limiter!.status('second.test')).admitted).toBe(0);
  });

  it("a denial by the group's own rate does not move the crawl-wide pacing", async () => {
    const { limiters, prefix } = await fleet(1, {
      defaults: { rate: { max: 1, durationMs: 10_000 }, burst: 1, concurrency: null },
      globalRate: { max: 100, durationMs: 1000 },
    });
    const [limiter] = limiters;
    const keys = limiterKeys(prefix);
    expect((await limiter!.acquire({ group: 'slow.test', leaseId: randomUUID() })).admitted).toBe(true);
    const global = await inspector.hmget(keys.global, 'tat', 'wakeAt', 'admitted');
    expect(await limiter!.acquire({ group: 'slow.test', leaseId: randomUUID() })).toMatchObject({ admitted: false, reason: 'rate' });
    expect(await inspector.hmget(keys.global, 'tat', 'wakeAt', 'admitted')).toEqual(global);
    // Another group takes the next crawl-wide slot, about 10 ms later, not 10 s.
    const other = await limiter!.acquire({ group: 'other.test', leaseId: randomUUID(), maxInlineWaitMs: 100 });
    expect(other.admitted).toBe(true);
    if (other.admitted) expect(other.startInMs).toBeLessThanOrEqual(11);
  });

  it('a group slot far beyond the next crawl-wide slot is denied as the group\'s rate, so the cap\'s slots are not left unused', async () => {
    const { limiters, prefix } = await fleet(1, {
      defaults: { rate: { max: 2, durationMs: 1000 }, burst: 1, concurrency: null },
      globalRate: { max: 20, durationMs: 1000 },
    });
    const [limiter] = limiters;
    const keys = limiterKeys(prefix);
    expect((await limiter!.acquire({ group: 'g.test', leaseId: randomUUID() })).admitted).toBe(true);
    const globalTat = await inspector.hget(keys.global, 'tat');
    // The group's next slot is ~525 ms away; the cap's is ~51 ms away.
    const held = await limiter!.acquire({ group: 'g.test', leaseId: randomUUID(), maxInlineWaitMs: 1000 });
    expect(held).toMatchObject({ admitted: false, reason: 'rate' });
    expect(await inspector.hget(keys.global, 'tat')).toBe(globalTat);
  });

  it('a slip moves the crawl-wide pacing back too', async () => {
    const { limiters, prefix } = await fleet(1, { defaults: { rate: null, concurrency: null }, globalRate: { max: 1, durationMs: 10_000 } });
    const [limiter] = limiters;
    const keys = limiterKeys(prefix);
    expect((await limiter!.acquire({ group: 'x.test', leaseId: randomUUID() })).admitted).toBe(true);
    const before = Number(await inspector.hget(keys.global, 'tat'));
    await limiter!.reportSlip('x.test', 300);
    expect(Number(await inspector.hget(keys.global, 'tat'))).toBeCloseTo(before + 300, 1);
  });

  it('without a cap, a slip moves the group\'s pacing and reads nothing of the crawl-wide key', async () => {
    const { limiters, prefix } = await fleet(1, { defaults: { rate: { max: 5, durationMs: 1000 }, concurrency: null } });
    const keys = limiterKeys(prefix);
    expect((await limiters[0]!.acquire({ group: 'slip.test', leaseId: randomUUID() })).admitted).toBe(true);
    const before = Number(await inspector.hget(keys.group('slip.test'), 'tat'));
    // The crawl-wide key exists (left by an earlier cap, say): it is still not read.
    await inspector.hset(keys.global, 'tat', '1');
    const calls = (stats: string, command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    const reads = async () => {
      const stats = await inspector.info('commandstats');
      return calls(stats, 'hget') + calls(stats, 'hmget');
    };
    const readsBefore = await reads();
    await limiters[0]!.reportSlip('slip.test', 300);
    // One read, of the group's own fields (the INFO call itself is no read).
    expect((await reads()) - readsBefore).toBe(1);
    expect(Number(await inspector.hget(keys.group('slip.test'), 'tat'))).toBeCloseTo(before + 300, 1);
    expect(await inspector.hget(keys.global, 'tat')).toBe('1');
  });

  it('without a cap, acquire does not touch the crawl-wide key', async () => {
    const { limiters, prefix } = await fleet(1, { defaults: { rate: { max: 5, durationMs: 1000 }, concurrency: null } });
    await limiters[0]!.acquire({ group: 'x.test', leaseId: randomUUID() });
    expect(await inspector.exists(limiterKeys(prefix).global)).toBe(0);
    expect(await limiters[0]!.globalStatus()).toEqual({ rate: null, paceMs: 0, admitted: 0, deferred: 0 });
  });
});
