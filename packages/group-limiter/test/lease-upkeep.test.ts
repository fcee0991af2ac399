import { randomUUID } from 'node:crypto';
import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, type LimitPolicyInput } from '../src/index.js';
import { limiterKeys } from '../src/keys.js';
import { sleep, testPrefix } from './support.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

/** Calls of one command so far, inside scripts included (INFO commandstats). */
async function calls(command: string): Promise<number> {
  const info = await server.client().info('commandstats');
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
  return Number(match?.[1] ?? 0);
}

describe('a group lease set kept without an expiry write per admission', () => {
  const policy: LimitPolicyInput = { defaults: { rate: null, concurrency: 100 }, leaseMs: 60_000 };

  it('outlives every lease in it, and renews its expiry only when a lease would outlive it or on the upkeep beat', async () => {
    const prefix = testPrefix();
    const redis = server.client();
    const limiter = createGroupLimiter({ redis, prefix });
    await limiter.setPolicy(policy);
    const leasesKey = limiterKeys(prefix).leases('keep.test');
    const before = await calls('pexpire');
    const leases = [];
    for (let i = 0; i < 40; i += 1) {
      const admission = await limiter.acquire({ group: 'keep.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
      expect(admission.admitted).toBe(true);
      if (!admission.admitted) return;
      leases.push(admission.lease);
      // Every lease in the set expires before the set does.
      const [ttl, latest, now] = await Promise.all([redis.pttl(leasesKey), redis.zrange(leasesKey, -1, -1, 'WITHSCORES'), redis.time()]);
      const nowMs = Number(now[0]) * 1000 + Number(now[1]) / 1000;
      expect(ttl).toBeGreaterThan(0);
      expect(nowMs + ttl).toBeGreaterThanOrEqual(Number(latest[1]));
    }
    // The first admission, and the 32nd's upkeep beat: 2 of 40 (it was one per admission, plus a ZRANGE).
    expect(await calls('pexpire')).toBe(before + 2);

    // All given back: Redis deletes the empty set; the next lease makes it again.
    for (const lease of leases) await limiter.release(lease, { status: 200, sent: true });
    expect(await redis.exists(leasesKey)).toBe(0);
    const again = await limiter.acquire({ group: 'keep.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    expect(again.admitted).toBe(true);
    // Without an expiry until its next renewal: kept longer, never shorter than its lease.
    expect(await redis.pttl(leasesKey)).toBe(-1);
    expect(await redis.zcard(leasesKey)).toBe(1);
  });

  it('a retaken late start that ends past the kept time extends the set too', async () => {
    const prefix = testPrefix();
    const redis = server.client();
    const limiter = createGroupLimiter({ redis, prefix });
    // A short lease, so the retaken start (later than the reserved one) ends past the kept time.
    await limiter.setPolicy({ defaults: { rate: { max: 1, durationMs: 1000 }, burst: 1, concurrency: 4 }, leaseMs: 200 });
    const leasesKey = limiterKeys(prefix).leases('retake.test');
    const admission = await limiter.acquire({ group: 'retake.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    expect(admission.admitted).toBe(true);
    if (!admission.admitted) return;
    await sleep(1_300);
    const retaken = await limiter.retakeLateStart(admission.lease);
    expect(retaken).not.toBeNull();
    const [ttl, latest, now] = await Promise.all([redis.pttl(leasesKey), redis.zrange(leasesKey, -1, -1, 'WITHSCORES'), redis.time()]);
    const nowMs = Number(now[0]) * 1000 + Number(now[1]) / 1000;
    expect(ttl).toBeGreaterThan(0);
    expect(nowMs + ttl).toBeGreaterThanOrEqual(Number(latest[1]));
  });
});

describe('a job progress mark written by the admission', () => {
  const policy: LimitPolicyInput = { defaults: { rate: null, concurrency: 100 } };

  it('is written into a job that exists, and leaves nothing behind for a job removed meanwhile', async () => {
    const prefix = testPrefix();
    const redis = server.client();
    const limiter = createGroupLimiter({ redis, prefix });
    await limiter.setPolicy(policy);
    const live = `${prefix}:job:live`;
    const gone = `${prefix}:job:gone`;
    await redis.hset(live, 'name', 'crawl', 'data', '{}');
    for (const [jobKey, value] of [[live, 1], [gone, 1], [live, 2], [gone, 2]] as const) {
      const admission = await limiter.acquire({ group: 'progress.test', leaseId: randomUUID(), maxInlineWaitMs: 0, progress: { jobKey, value } });
      expect(admission.admitted).toBe(true);
    }
    expect(await redis.hgetall(live)).toEqual({ name: 'crawl', data: '{}', progress: '2' });
    expect(await redis.exists(gone)).toBe(0);
  });
});

describe('a release given the lease start', () => {
  it('takes the hold time from it without looking the lease up, and frees the slot', async () => {
    const prefix = testPrefix();
    const limiter = createGroupLimiter({ redis: server.client(), prefix });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 1 } });
    const first = await limiter.acquire({ group: 'hold.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    expect(first.admitted).toBe(true);
    if (!first.admitted) return;
    expect(first.lease.startAt).toBe(first.startAt);
    expect((await limiter.acquire({ group: 'hold.test', leaseId: randomUUID(), maxInlineWaitMs: 0 })).admitted).toBe(false);
    await sleep(120);
    const lookups = await calls('zscore');
    await limiter.release(first.lease, { status: 200, sent: true });
    expect(await calls('zscore')).toBe(lookups);
    expect((await limiter.acquire({ group: 'hold.test', leaseId: randomUUID(), maxInlineWaitMs: 0 })).admitted).toBe(true);
    // Written by that admission, with its own fields.
    expect(Number(await server.client().hget(limiterKeys(prefix).group('hold.test'), 'holdMs'))).toBeGreaterThanOrEqual(119);
  });
});

describe('a release with nothing to report but the end of its request', () => {
  it("runs no script and reads no TIME: its lease goes with one ZREM, and its hold time and request are written by the group's next admission or a flush", async () => {
    const prefix = testPrefix();
    const redis = server.client();
    const limiter = createGroupLimiter({ redis, prefix });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 10 } });
    const groupKey = limiterKeys(prefix).group('clock.test');
    // The group's first release writes its hold time at once: the release step plans its jobs by it.
    const first = await limiter.acquire({ group: 'clock.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    if (!first.admitted) throw new Error('not admitted');
    await limiter.release(first.lease, { status: 200, sent: true });
    expect(await redis.hget(groupKey, 'started')).toBe('1');
    const admission = await limiter.acquire({ group: 'clock.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    expect(admission.admitted).toBe(true);
    if (!admission.admitted) return;
    await sleep(60);
    const before = { time: await calls('time'), evalsha: await calls('evalsha'), zrem: await calls('zrem') };
    await limiter.release(admission.lease, { status: 200, sent: true });
    expect({ time: await calls('time'), evalsha: await calls('evalsha'), zrem: await calls('zrem') }).toEqual({ ...before, zrem: before.zrem + 1 });
    expect(await redis.zcard(limiterKeys(prefix).leases('clock.test'))).toBe(0);
    expect(await redis.hget(groupKey, 'started')).toBe('1');
    const firstHold = Number(await redis.hget(groupKey, 'holdMs'));
    await limiter.flush();
    // The moving average: 0.8 of the first hold, 0.2 of this one (about 60 ms).
    expect(Number(await redis.hget(groupKey, 'holdMs'))).toBeGreaterThanOrEqual(firstHold * 0.8 + 0.2 * 55);
    expect(Number(await redis.hget(groupKey, 'holdMs'))).toBeLessThan(60_000);
    expect(await redis.hget(groupKey, 'started')).toBe('2');
    // A second flush has nothing left to write.
    const evalsBefore = await calls('evalsha');
    await limiter.flush();
    expect(await calls('evalsha')).toBe(evalsBefore);
  });

  it('a group the process admits nothing more of gets them written on its own beat, within a few seconds', async () => {
    const prefix = testPrefix();
    const redis = server.client();
    const limiter = createGroupLimiter({ redis, prefix });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 10 } });
    for (let i = 0; i < 2; i += 1) {
      const admission = await limiter.acquire({ group: 'idle.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
      if (!admission.admitted) throw new Error('not admitted');
      await limiter.release(admission.lease, { status: 200, sent: true });
    }
    const groupKey = limiterKeys(prefix).group('idle.test');
    expect(await redis.hget(groupKey, 'started')).toBe('1');
    await waitFor(async () => (await redis.hget(groupKey, 'started')) === '2', { what: 'the beat to write the second request', timeoutMs: 15_000, intervalMs: 50 });
  });

  it('a 429 runs the release script at once: the pause is in force for the next admission, whoever asks', async () => {
    const prefix = testPrefix();
    const limiter = createGroupLimiter({ redis: server.client(), prefix });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 10 } });
    const admission = await limiter.acquire({ group: 'busy.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    if (!admission.admitted) throw new Error('not admitted');
    await limiter.release(admission.lease, { status: 429, retryAfterMs: 5_000, sent: true });
    const other = createGroupLimiter({ redis: server.client(), prefix });
    const next = await other.acquire({ group: 'busy.test', leaseId: randomUUID(), maxInlineWaitMs: 0 });
    expect(next).toMatchObject({ admitted: false, reason: 'paused' });
    expect((await other.status('busy.test')).started).toBe(1);
  });
});
