import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, type GroupLimiter } from '../src/index.js';
import { testPrefix } from './support.js';

let server: TestRedis;
let limiter: GroupLimiter;
beforeAll(async () => {
  server = await startTestRedis();
  limiter = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
  await limiter.setPolicy({ defaults: { rate: null, concurrency: 5 }, rules: [{ match: 'c.test', concurrency: 1 }] });
});
afterAll(async () => server.stop());

describe('status() and list()', () => {
  it('report in-flight leases, pauses and counters per group', async () => {
    const before = Date.now();
    await limiter.acquire({ group: 'a.test', leaseId: 'a1' });
    await limiter.acquire({ group: 'a.test', leaseId: 'a2' });
    const b = await limiter.acquire({ group: 'b.test', leaseId: 'b1' });
    if (b.admitted) await limiter.release(b.lease, { status: 200 });
    await limiter.pause('c.test', 10_000, 'maintenance');
    expect((await limiter.acquire({ group: 'c.test', leaseId: 'c1' })).admitted).toBe(false);

    const all = await limiter.list();
    expect(all.map((status) => status.group)).toEqual(['a.test', 'b.test', 'c.test']);
    const [a, bStatus, c] = all;
    expect(a).toMatchObject({ inFlight: 2, admitted: 2, deferred: 0, lateStarts: 0, pausedUntil: null, pauseReason: null, strikes: 0 });
    expect(a?.limits).toEqual({ rate: null, burst: 1, concurrency: 5 });
    expect(bStatus).toMatchObject({ inFlight: 0, admitted: 1 });
    expect(bStatus?.lastAdmitAt).toBeGreaterThanOrEqual(before - 5);
    expect(bStatus?.lastAdmitAt).toBeLessThanOrEqual(Date.now() + 5);
    expect(c).toMatchObject({ inFlight: 0, admitted: 0, deferred: 1, pauseReason: 'maintenance', lastAdmitAt: null });
    expect(c?.limits.concurrency).toBe(1);
    expect(c?.pausedUntil).toBeGreaterThan(Date.now() + 9000);
    expect(await limiter.status('a.test')).toEqual(a);
  });

  it('counts an abandoned (late) start once and frees its slot', async () => {
    const admission = await limiter.acquire({ group: 'late.test', leaseId: 'late-1' });
    expect(admission.admitted).toBe(true);
    if (!admission.admitted) return;
    expect((await limiter.status('late.test')).inFlight).toBe(1);
    await limiter.abandon(admission.lease);
    await limiter.abandon(admission.lease);
    expect(await limiter.status('late.test')).toMatchObject({ inFlight: 0, lateStarts: 1, admitted: 1 });
  });

  it('reports an unknown group as idle without registering it', async () => {
    const unknown = await limiter.status('never-seen.test');
    expect(unknown).toMatchObject({ inFlight: 0, admitted: 0, deferred: 0, pausedUntil: null, strikes: 0, lastAdmitAt: null });
    expect((await limiter.list()).map((status) => status.group)).not.toContain('never-seen.test');
  });
});
