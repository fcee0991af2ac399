import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, type Admission, type GroupLimiter } from '../src/index.js';
import { sleep, testPrefix } from './support.js';

let server: TestRedis;
let limiter: GroupLimiter;
beforeAll(async () => {
  server = await startTestRedis();
  limiter = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
  // 5/s with no margins: starts exactly 200 ms apart.
  await limiter.setPolicy({ defaults: { rate: { max: 5, durationMs: 1000 }, concurrency: 2 }, safetyMarginMs: 0, spacingMargin: 0 });
});
afterAll(async () => server.stop());

async function admitted(group: string, leaseId: string): Promise<Extract<Admission, { admitted: true }>> {
  const admission = await limiter.acquire({ group, leaseId, maxInlineWaitMs: 1_000 });
  if (!admission.admitted) throw new Error(`${leaseId} was not admitted`);
  return admission;
}

describe('late-start allowance', () => {
  it('is half the pacing margin for a rate spaced wider than its floor, half the safety margin for a rate too fast to hold pair by pair, and none without any spacing (a late start crowds no one)', async () => {
    const own = await startTestRedis();
    try {
      const fleet = createGroupLimiter({ redis: own.client(), prefix: testPrefix() });
      await fleet.setPolicy({
        defaults: { rate: null, concurrency: 1000 },
        // 10/s: spacing 100 ms, margin max(25 / 10, 5% of 100) = 5 ms; 100,000/s: spacing 0.01 ms.
        rules: [
          { match: 'spaced.test', rate: { max: 10, durationMs: 1_000 } },
          { match: 'fast.test', rate: { max: 100_000, durationMs: 1_000 } },
        ],
        safetyMarginMs: 25,
      });
      const allowance = async (group: string) => {
        const admission = await fleet.acquire({ group, leaseId: `a-${group}`, maxInlineWaitMs: 1_000 });
        if (!admission.admitted) throw new Error(`${group} was not admitted`);
        return admission.startBy - admission.localStartAt;
      };
      expect(await allowance('spaced.test')).toBeCloseTo(5, 6);
      expect(await allowance('fast.test')).toBeCloseTo(12.5, 6);
      expect(await allowance('open.test')).toBe(Number.POSITIVE_INFINITY);
      // A Crawl-delay gives a group without a rate a spacing (the script's own figure): its starts have a deadline again.
      await fleet.setMinInterval('delayed.test', 100);
      expect(await allowance('delayed.test')).toBeCloseTo(12.5, 6);
    } finally {
      await own.stop();
    }
  });
});

describe('retakeLateStart', () => {
  it('starts a missed start now when no later start was admitted, and spaces the next one from it', async () => {
    const group = 'retaken.test';
    const missed = await admitted(group, 'missed');
    await sleep(60);
    const retaken = await limiter.retakeLateStart(missed.lease);
    expect(retaken).not.toBeNull();
    if (retaken === null) return;
    expect(retaken.startAt - missed.startAt).toBeGreaterThanOrEqual(60);
    expect(retaken.startBy).toBeGreaterThan(retaken.localStartAt);
    // The group's pacing moved back by the lateness: the next start is a whole interval after the retaken one.
    const next = await admitted(group, 'next');
    expect(next.startAt - retaken.startAt).toBeGreaterThanOrEqual(200 - 0.01);
    const status = await limiter.status(group);
    expect(status).toMatchObject({ inFlight: 2, slippedStarts: 1, lateStarts: 0 });
  });

  it('with a grace, moves the pacing back by that much more and gives the retaken start as long to go', async () => {
    const group = 'graced.test';
    const missed = await admitted(group, 'missed');
    await sleep(40);
    const retaken = await limiter.retakeLateStart(missed.lease, 30);
    expect(retaken).not.toBeNull();
    if (retaken === null) return;
    // No margins in this policy: the allowance is its 5 ms floor, plus the grace.
    expect(retaken.startBy - retaken.localStartAt).toBeCloseTo(35, 6);
    const next = await admitted(group, 'next');
    expect(next.startAt - retaken.startAt).toBeGreaterThanOrEqual(200 + 30 - 0.01);
    await expect(limiter.retakeLateStart(next.lease, -1)).rejects.toThrow(/graceMs/);
  });

  it('with a grace asked at admission, moves the pacing back by that much more (a quarter interval at most) and gives the start as long to go', async () => {
    const graced = await limiter.acquire({ group: 'upfront.test', leaseId: 'first', maxInlineWaitMs: 1_000, graceMs: 30 });
    if (!graced.admitted) throw new Error('the graced start was not admitted');
    // No margins in this policy: the allowance is its 5 ms floor, plus the grace.
    expect(graced.startBy - graced.localStartAt).toBeCloseTo(35, 6);
    const next = await admitted('upfront.test', 'next');
    expect(next.startAt - graced.startAt).toBeGreaterThanOrEqual(200 + 30 - 0.01);
    expect(next.startBy - next.localStartAt).toBeCloseTo(5, 6);
    // 500 ms asked, 50 taken: a quarter of the 200 ms interval.
    const capped = await limiter.acquire({ group: 'grace-cap.test', leaseId: 'first', maxInlineWaitMs: 1_000, graceMs: 500 });
    if (!capped.admitted) throw new Error('the capped start was not admitted');
    expect(capped.startBy - capped.localStartAt).toBeCloseTo(55, 6);
    expect((await admitted('grace-cap.test', 'next')).startAt - capped.startAt).toBeGreaterThanOrEqual(250 - 0.01);
    await expect(limiter.acquire({ group: 'upfront.test', leaseId: 'bad', graceMs: -1 })).rejects.toThrow(/graceMs/);
  });

  it('gives a missed start back when a later start was admitted (it holds the next slot), or when the group was paused', async () => {
    const group = 'overtaken.test';
    const missed = await admitted(group, 'missed');
    await admitted(group, 'later');
    await sleep(Math.max(0, missed.localStartAt + 30 - performance.now()));
    expect(await limiter.retakeLateStart(missed.lease)).toBeNull();
    expect(await limiter.status(group)).toMatchObject({ inFlight: 1, lateStarts: 1, slippedStarts: 0 });

    const paused = 'paused.test';
    const before = await admitted(paused, 'before-pause');
    await limiter.pause(paused, 5_000);
    await sleep(30);
    expect(await limiter.retakeLateStart(before.lease)).toBeNull();
    expect(await limiter.status(paused)).toMatchObject({ inFlight: 0, lateStarts: 1 });
  });
});
