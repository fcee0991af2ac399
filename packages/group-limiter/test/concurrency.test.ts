import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, GroupLimiterArgumentError, limiterKeys, type GroupLimiter } from '../src/index.js';
import { sleep, testPrefix } from './support.js';

let server: TestRedis;
let limiters: GroupLimiter[];
let prefix: string;
beforeAll(async () => {
  server = await startTestRedis();
  prefix = testPrefix();
  limiters = Array.from({ length: 3 }, () => createGroupLimiter({ redis: server.client(), prefix }));
  await limiters[0]!.setPolicy({ defaults: { rate: null, concurrency: 2 }, leaseMs: 300 });
});
afterAll(async () => server.stop());

describe('concurrency leases across instances', () => {
  it('never lets more than 2 requests of a group run at once, and released slots are reused', async () => {
    const group = 'two-at-a-time.test';
    let inFlight = 0;
    let maxInFlight = 0;
    let completed = 0;
    const deadline = performance.now() + 2500;
    const worker = async (limiter: GroupLimiter): Promise<void> => {
      while (performance.now() < deadline) {
        const admission = await limiter.acquire({ group, leaseId: randomUUID() });
        if (!admission.admitted) {
          expect(admission.reason).toBe('concurrency');
          await sleep(admission.retryInMs);
          continue;
        }
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(20 + Math.random() * 30);
        // Counted down before the release reaches Redis, so the JS count can only under-report.
        inFlight -= 1;
        completed += 1;
        await limiter.release(admission.lease, { status: 200 });
      }
    };
    await Promise.all(limiters.flatMap((limiter) => [worker(limiter), worker(limiter), worker(limiter)]));
    expect(maxInFlight).toBe(2);
    // 2 slots x 2.5 s / ~35 ms per request would be ~140; the slots were clearly reused.
    expect(completed).toBeGreaterThanOrEqual(30);
    const status = await limiters[0]!.status(group);
    expect(status.inFlight).toBe(0);
    expect(status.admitted).toBe(completed);
  });

  it('gives a slot back by itself when its lease is never released (crashed worker)', async () => {
    const group = 'crashed-worker.test';
    const [a, b, c] = limiters as [GroupLimiter, GroupLimiter, GroupLimiter];
    expect((await a.acquire({ group, leaseId: 'lost-1' })).admitted).toBe(true);
    expect((await b.acquire({ group, leaseId: 'lost-2' })).admitted).toBe(true);
    const denied = await c.acquire({ group, leaseId: 'waiting' });
    expect(denied).toMatchObject({ admitted: false, reason: 'concurrency' });
    await sleep(100);
    expect((await c.acquire({ group, leaseId: 'waiting' })).admitted).toBe(false);
    await sleep(300); // past leaseMs = 300
    const admitted = await c.acquire({ group, leaseId: 'waiting' });
    expect(admitted.admitted).toBe(true);
    expect((await a.status(group)).inFlight).toBe(1);
  });

  it('drops expired leases within 32 admissions of the group, so crashed workers leave nothing behind', async () => {
    const group = 'crashed-often.test';
    const [a] = limiters as [GroupLimiter];
    expect((await a.acquire({ group, leaseId: 'lost' })).admitted).toBe(true);
    await sleep(400); // past leaseMs = 300
    const leases = limiterKeys(prefix).leases(group);
    const redis = server.client();
    try {
      expect(await redis.zscore(leases, 'lost')).not.toBeNull();
      for (let i = 0; i < 32; i += 1) {
        const admission = await a.acquire({ group, leaseId: `ok-${i}` });
        if (!admission.admitted) throw new Error(`admission ${i} denied: ${admission.reason}`);
        await a.release(admission.lease);
      }
      expect(await redis.zscore(leases, 'lost')).toBeNull();
    } finally {
      redis.disconnect();
    }
  });

  it('a start reserved ahead holds no slot while it waits; the cap is checked again when it starts', async () => {
    const group = 'paced.test';
    const a = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await a.setPolicy({ defaults: { rate: { max: 2, durationMs: 1000 }, concurrency: 2 } });
    const maxInlineWaitMs = 5_000;
    const first = await a.acquire({ group, leaseId: 'first', maxInlineWaitMs });
    const second = await a.acquire({ group, leaseId: 'second', maxInlineWaitMs });
    const third = await a.acquire({ group, leaseId: 'third', maxInlineWaitMs });
    // Only 'first' has started, so both later starts could be reserved under a cap of 2.
    expect(first).toMatchObject({ admitted: true, startInMs: 0, confirmBeforeStart: false });
    expect(second).toMatchObject({ admitted: true, confirmBeforeStart: true });
    expect(third).toMatchObject({ admitted: true, confirmBeforeStart: true });
    if (!second.admitted || !third.admitted) return;
    await sleep(second.localStartAt - performance.now());
    expect(await a.confirmStart(second.lease)).toEqual({ go: true });
    await sleep(third.localStartAt - performance.now());
    // 'first' and 'second' are in flight (not released): the third start must not go.
    expect(await a.confirmStart(third.lease)).toMatchObject({ go: false, reason: 'concurrency' });
    expect((await a.status(group)).inFlight).toBe(2);
  });

  it('a crashed worker\'s expired lease does not count against the cap when a start reserved ahead is confirmed', async () => {
    const group = 'confirm-past-crash.test';
    const a = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await a.setPolicy({ defaults: { rate: { max: 1, durationMs: 2000 }, concurrency: 1 }, leaseMs: 300 });
    const maxInlineWaitMs = 10_000;
    // Admitted and never released: its worker died with the slot.
    expect(await a.acquire({ group, leaseId: 'lost', maxInlineWaitMs })).toMatchObject({ admitted: true, startInMs: 0 });
    await sleep(400); // past leaseMs = 300, well before the group's next start 2 s after the first
    const next = await a.acquire({ group, leaseId: 'next', maxInlineWaitMs });
    expect(next).toMatchObject({ admitted: true, confirmBeforeStart: true });
    if (!next.admitted) return;
    await sleep(next.localStartAt - performance.now());
    expect(await a.confirmStart(next.lease)).toEqual({ go: true });
  });

  it('a start confirmed after its own lease ran out (a stalled process) takes a lease anew', async () => {
    const group = 'confirm-after-stall.test';
    const prefix = testPrefix();
    const a = createGroupLimiter({ redis: server.client(), prefix });
    await a.setPolicy({ defaults: { rate: { max: 1, durationMs: 2000 }, concurrency: 1 }, leaseMs: 300 });
    const maxInlineWaitMs = 10_000;
    const first = await a.acquire({ group, leaseId: 'first', maxInlineWaitMs });
    if (!first.admitted) throw new Error('first start denied');
    await a.release(first.lease);
    const stalled = await a.acquire({ group, leaseId: 'stalled', maxInlineWaitMs });
    expect(stalled).toMatchObject({ admitted: true, confirmBeforeStart: true });
    if (!stalled.admitted) return;
    // Past its start and its whole lease before it is confirmed, with room for
    // this process's reading of the Redis clock to be off by a stall.
    await sleep(stalled.localStartAt + 700 - performance.now());
    expect(await a.confirmStart(stalled.lease)).toEqual({ go: true });
    const redis = server.client();
    try {
      const score = Number(await redis.zscore(limiterKeys(prefix).leases(group), 'stalled'));
      // Scored from the confirm (about 700 ms after the start) plus a lease, not from the reserved start.
      expect(score).toBeGreaterThan(stalled.startAt + 300 + 300);
    } finally {
      redis.disconnect();
    }
  });

  it('starts reserved less than 50 ms ahead are checked at admission, and the cap holds with them', async () => {
    const group = 'near.test';
    const prefix = testPrefix();
    const fleet = Array.from({ length: 3 }, () => createGroupLimiter({ redis: server.client(), prefix }));
    // 40/s: starts 25 ms apart, each held 30-60 ms, so the cap of 2 binds and most starts are reserved a little ahead.
    await fleet[0]!.setPolicy({ defaults: { rate: { max: 40, durationMs: 1000 }, concurrency: 2 }, safetyMarginMs: 0, spacingMargin: 0 });
    let inFlight = 0;
    let maxInFlight = 0;
    let near = 0;
    const deadline = performance.now() + 2000;
    const worker = async (limiter: GroupLimiter): Promise<void> => {
      while (performance.now() < deadline) {
        const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 500 });
        if (!admission.admitted) {
          await sleep(admission.retryInMs);
          continue;
        }
        // Near starts are admitted for good; further ones are re-checked when they come
        // (startInMs is rounded up: 50 may be either).
        if (admission.startInMs !== 50) expect(admission.confirmBeforeStart).toBe(admission.startInMs > 50);
        if (admission.startInMs > 0 && admission.startInMs < 50) near += 1;
        await sleep(admission.localStartAt - performance.now());
        if (admission.confirmBeforeStart) {
          if (!(await limiter.confirmStart(admission.lease)).go) continue;
        }
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(30 + Math.random() * 30);
        inFlight -= 1;
        await limiter.release(admission.lease, { status: 200 });
      }
    };
    await Promise.all(fleet.flatMap((limiter) => [worker(limiter), worker(limiter), worker(limiter)]));
    expect(near).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(2);
    expect(maxInFlight).toBe(2);
  });

  it('release is idempotent and re-acquiring a held lease id does not take a second slot', async () => {
    const group = 'idempotent.test';
    const [a] = limiters as [GroupLimiter];
    const first = await a.acquire({ group, leaseId: 'x' });
    expect(first.admitted).toBe(true);
    expect((await a.acquire({ group, leaseId: 'x' })).admitted).toBe(true);
    expect((await a.status(group)).inFlight).toBe(1);
    await a.release({ group, leaseId: 'x' });
    await a.release({ group, leaseId: 'x' });
    expect((await a.status(group)).inFlight).toBe(0);
    expect((await a.acquire({ group, leaseId: 'y' })).admitted).toBe(true);
    expect((await a.acquire({ group, leaseId: 'z' })).admitted).toBe(true);
    expect((await a.acquire({ group, leaseId: 'w' })).admitted).toBe(false);
  });

  it('a release with an outcome it cannot take still gives the slot back, then says what was wrong', async () => {
    const group = 'bad-outcome.test';
    // A lease far longer than the test: expiry cannot be what frees the slot.
    const a = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await a.setPolicy({ defaults: { rate: null, concurrency: 2 }, leaseMs: 60_000 });
    for (const [leaseId, outcome] of [['zero', { status: 0, sent: true }], ['negative', { status: 200, retryAfterMs: -1 }]] as const) {
      expect((await a.acquire({ group, leaseId })).admitted).toBe(true);
      await expect(a.release({ group, leaseId }, outcome)).rejects.toBeInstanceOf(GroupLimiterArgumentError);
      // Not held until the lease expires (60 s here): free at once.
      expect((await a.status(group)).inFlight).toBe(0);
    }
    expect((await a.status(group)).started).toBe(1);
  });
});
