import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADAPTIVE_IMPLIED_CONCURRENCY,
  createGroupLimiter,
  describePaceChange,
  GroupLimiterArgumentError,
  InvalidLimitPolicyError,
  normalizePolicy,
  resolveLimits,
  type GroupLimiter,
  type Lease,
  type LimitPolicyInput,
} from '../src/index.js';
import { pacedLimits, sleep, testPrefix } from './support.js';

// Adaptive pacing against a real Redis: what one release does to
// the shared pace, and what acquire, confirmStart and the release step (runPaced) make of it. Unless
// a case is about recovery, the pace grows back so slowly (0.0001 per second)
// that it stays put for the length of a test, however loaded the machine.

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

const STILL = 0.000_1;

/** Three limiters on their own connections (three workers) sharing one prefix. */
async function fleet(policy: LimitPolicyInput): Promise<[GroupLimiter, GroupLimiter, GroupLimiter]> {
  const prefix = testPrefix();
  const limiters = Array.from({ length: 3 }, () => createGroupLimiter({ redis: server.client(), prefix })) as [GroupLimiter, GroupLimiter, GroupLimiter];
  await limiters[0].setPolicy(policy);
  return limiters;
}

async function admit(limiter: GroupLimiter, group: string, maxInlineWaitMs = 0): Promise<Lease & { startAt: number }> {
  const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs });
  if (!admission.admitted) throw new Error(`not admitted: ${admission.reason}`);
  return { ...admission.lease, startAt: admission.startAt };
}

const unlimited: LimitPolicyInput = { defaults: { rate: null, concurrency: 8 }, adaptive: { enabled: true, risePerSecond: STILL } };

describe('adaptive policy', () => {
  it('is off by default, on per rule, and fills its defaults', () => {
    const off = normalizePolicy({});
    expect(off.adaptive).toEqual({ enabled: false, floor: 0.1, risePerSecond: 0.01, latencyTolerance: 2, latencySlackMs: 100 });
    expect(resolveLimits(off, 'a.test').adaptive).toBe(false);
    const mixed = normalizePolicy({ adaptive: { enabled: true }, rules: [{ match: 'fixed.test', adaptive: false }, { match: 'other.test', concurrency: 3 }] });
    expect(resolveLimits(mixed, 'fixed.test').adaptive).toBe(false);
    expect(resolveLimits(mixed, 'other.test').adaptive).toBe(true);
    expect(resolveLimits(normalizePolicy({ rules: [{ match: 'one.test', adaptive: true }] }), 'one.test').adaptive).toBe(true);
  });

  it('gives an adapting group with neither rate nor concurrency cap an implied ceiling to scale', () => {
    const policy = normalizePolicy({ defaults: { rate: null, concurrency: null }, adaptive: { enabled: true }, rules: [{ match: 'fixed.test', adaptive: false }] });
    expect(resolveLimits(policy, 'a.test')).toMatchObject({ concurrency: ADAPTIVE_IMPLIED_CONCURRENCY, limits: { concurrency: null } });
    expect(resolveLimits(policy, 'fixed.test').concurrency).toBe(0);
  });

  it('refuses a floor outside (0, 1] and a non-boolean switch', () => {
    expect(() => normalizePolicy({ adaptive: { floor: 0 } })).toThrow(InvalidLimitPolicyError);
    expect(() => normalizePolicy({ adaptive: { floor: 1.5 } })).toThrow(InvalidLimitPolicyError);
    expect(() => normalizePolicy({ rules: [{ match: 'a.test', adaptive: 'yes' as unknown as boolean }] })).toThrow(/rules\[0\]\.adaptive/);
  });
});

describe('adaptive pacing in the gate', () => {
  it('a 503 halves the pace once per episode across workers; a request admitted after the cut cuts again', async () => {
    const limiters = await fleet(unlimited);
    const group = 'episode.test';
    // Six requests in flight on three workers when the site starts failing.
    const before = await Promise.all(limiters.flatMap((limiter) => [admit(limiter, group), admit(limiter, group)]));
    const first = await limiters[0].release(before[0]!, { status: 503, sent: true });
    expect(first).toEqual({ group, direction: 'down', from: 1, to: 0.5, cause: '5xx', reason: 'HTTP 503' });
    // The other five were admitted before the cut: the same episode.
    for (const [i, lease] of before.slice(1).entries()) {
      expect(await limiters[i % 3]!.release(lease, { status: 503, sent: true })).toBeNull();
    }
    expect(await limiters[1].status(group)).toMatchObject({ adaptive: true, paceReason: 'HTTP 503', paceCuts: 1, effectiveConcurrency: 4 });
    const after = await admit(limiters[2], group);
    const second = await limiters[2].release(after, { failure: 'timeout', sent: true });
    expect(second).toMatchObject({ direction: 'down', cause: 'timeout', reason: 'timeout' });
    expect(second?.to).toBeCloseTo(0.25, 2);
    const status = await limiters[0].status(group);
    expect(status.paceFactor).toBeCloseTo(0.25, 2);
    expect(status).toMatchObject({ paceCuts: 2, effectiveConcurrency: 2, limits: { concurrency: 8 } });
  });

  it('never goes below the floor, and a group that does not adapt keeps its pace', async () => {
    const limiters = await fleet({ ...unlimited, adaptive: { enabled: true, floor: 0.2, risePerSecond: STILL }, rules: [{ match: 'fixed.test', adaptive: false }] });
    for (let i = 0; i < 6; i += 1) await limiters[i % 3]!.release(await admit(limiters[0], 'floor.test'), { status: 502, sent: true });
    const floored = await limiters[0].status('floor.test');
    expect(floored.paceFactor).toBeCloseTo(0.2, 3);
    // 1, 0.5, 0.25, then the floor: later signals hold it there.
    expect(floored).toMatchObject({ paceCuts: 3, effectiveConcurrency: 1 });
    for (let i = 0; i < 3; i += 1) expect(await limiters[0].release(await admit(limiters[0], 'fixed.test'), { status: 503, sent: true })).toBeNull();
    expect(await limiters[0].status('fixed.test')).toMatchObject({ adaptive: false, paceFactor: 1, paceCuts: 0, effectiveConcurrency: 8, paceReason: null });
  });

  it('cuts on 429, 5xx, 408, timeouts and connection errors, not on other answers', async () => {
    const [limiter] = await fleet(unlimited);
    const cutBy = async (outcome: Parameters<GroupLimiter['release']>[1]): Promise<string | null> => {
      const group = `signal-${randomUUID()}.test`;
      return (await limiter.release(await admit(limiter, group), { sent: true, ...outcome }))?.cause ?? null;
    };
    expect(await cutBy({ status: 429 })).toBe('429');
    expect(await cutBy({ status: 500 })).toBe('5xx');
    expect(await cutBy({ status: 504 })).toBe('5xx');
    expect(await cutBy({ status: 408 })).toBe('timeout');
    expect(await cutBy({ failure: 'network' })).toBe('network');
    for (const status of [200, 301, 404, 410, 501, 505]) expect(await cutBy({ status, latencyMs: 5 }), `HTTP ${status}`).toBeNull();
    expect(await cutBy({})).toBeNull();
    await expect(limiter.release(await admit(limiter, 'bad.test'), { latencyMs: -1 })).rejects.toThrow(GroupLimiterArgumentError);
    // The bad outcome still gave the slot back.
    expect((await limiter.status('bad.test')).inFlight).toBe(0);
  });

  it('latency: judged against the lowest latency seen, cut when sample and average are both over the limit', async () => {
    const [limiter] = await fleet(unlimited);
    const group = 'latency.test';
    const release = async (latencyMs: number) => limiter.release(await admit(limiter, group), { status: 200, latencyMs, sent: true });
    // Baseline 50 ms; limit max(2 x 50, 50 + 100) = 150 ms.
    for (const latency of [80, 50, 60, 100, 100]) expect(await release(latency)).toBeNull();
    expect(await limiter.status(group)).toMatchObject({ baselineMs: 50, paceFactor: 1 });
    // One slow answer does not move an average of ~73 ms over the limit.
    expect(await release(300)).toBeNull();
    // Latency that stays up does, by how far the average is over the limit.
    let cut = null;
    for (let i = 0; i < 10 && cut === null; i += 1) cut = await release(400);
    expect(cut).toMatchObject({ direction: 'down', from: 1, cause: 'latency' });
    const average = Number(/^latency (\d+) ms over 150 ms \(baseline 50 ms\)$/.exec(cut?.reason ?? '')?.[1]);
    expect(average).toBeGreaterThan(150);
    expect(cut?.to).toBeCloseTo(Math.min(0.9, Math.max(0.5, 150 / average)), 2);
    // A fast answer after the cut is not congestion, even while the average is still high.
    expect(await release(60)).toBeNull();
    // Far over the limit: halved, no more.
    let far = null;
    for (let i = 0; i < 10 && far === null; i += 1) far = await release(3_000);
    expect(far?.to).toBeCloseTo((cut?.to ?? 0) / 2, 2);
  });

  it('latency the floor pace cannot bring down becomes the baseline instead of a cut', async () => {
    const [limiter] = await fleet({ ...unlimited, adaptive: { enabled: true, floor: 0.5, risePerSecond: STILL } });
    const group = 'slow-site.test';
    const release = async (latencyMs: number) => limiter.release(await admit(limiter, group), { status: 200, latencyMs, sent: true });
    await release(10);
    for (let i = 0; i < 20; i += 1) await release(800);
    const status = await limiter.status(group);
    expect(status.paceFactor).toBeCloseTo(0.5, 3);
    expect(status.baselineMs).toBeGreaterThan(400);
    // Judged against the site's own latency now: no more cuts.
    for (let i = 0; i < 5; i += 1) expect(await release(800)).toBeNull();
    expect((await limiter.status(group)).paceCuts).toBe(status.paceCuts);
  });

  it('grows back additively with time, and the first release at full pace says so once', async () => {
    // 0.5 back to 1 at 2 per second: 250 ms.
    const [limiter] = await fleet({ ...unlimited, adaptive: { enabled: true, risePerSecond: 2 } });
    const group = 'recovery.test';
    const cut = await limiter.release(await admit(limiter, group), { status: 503, sent: true });
    expect(cut).toMatchObject({ direction: 'down', to: 0.5 });
    expect(describePaceChange(cut!)).toBe('group recovery.test: pace cut to 0.50 of its limits (was 1.00): HTTP 503');
    const cutAt = (await limiter.status(group)).paceChangedAt ?? 0;
    await sleep(400);
    const recovered = await limiter.status(group);
    expect(recovered).toMatchObject({ paceFactor: 1, paceReason: 'recovered after HTTP 503', effectiveConcurrency: 8 });
    // It reached 1 at the cut plus 250 ms, whenever it is read.
    expect(Math.abs((recovered.paceChangedAt ?? 0) - (cutAt + 250))).toBeLessThanOrEqual(2);
    const back = await limiter.release(await admit(limiter, group), { status: 200, sent: true });
    expect(back).toEqual({ group, direction: 'up', from: 0.5, to: 1, cause: '5xx', reason: 'HTTP 503' });
    expect(describePaceChange(back!)).toBe('group recovery.test: back at full pace (was cut to 0.50: HTTP 503)');
    expect(await limiter.release(await admit(limiter, group), { status: 200, sent: true })).toBeNull();
    expect(await limiter.status(group)).toMatchObject({ paceFactor: 1, paceReason: 'recovered after HTTP 503', paceCuts: 1 });
  });

  it('acquire spaces starts by interval / pace, Crawl-delay included, and caps concurrency at cap x pace', async () => {
    const [a, b] = await fleet({
      defaults: { rate: { max: 10, durationMs: 1000 }, concurrency: 4 },
      safetyMarginMs: 0,
      spacingMargin: 0,
      adaptive: { enabled: true, risePerSecond: STILL },
    });
    const group = 'paced.test';
    await a.release(await admit(a, group), { status: 503, sent: true });
    // 100 ms at full pace, 200 ms at half.
    const starts = [await admit(a, group, 10_000), await admit(b, group, 10_000), await admit(a, group, 10_000)].map((lease) => lease.startAt);
    expect(starts[1]! - starts[0]!).toBeCloseTo(200, 0);
    expect(starts[2]! - starts[1]!).toBeCloseTo(200, 0);
    expect((await a.status(group)).paceMs).toBeCloseTo(200, 0);
    // A Crawl-delay longer than the rate's spacing is slowed down the same way.
    await a.setMinInterval(group, 300);
    const later = [await admit(b, group, 10_000), await admit(a, group, 10_000)].map((lease) => lease.startAt);
    expect(later[1]! - later[0]!).toBeCloseTo(600, 0);
    expect((await b.status(group)).paceMs).toBeCloseTo(600, 0);

    // Concurrency 4 at half pace: two in flight at once.
    const capped = 'capped.test';
    await a.setPolicy({ defaults: { rate: null, concurrency: 4 }, adaptive: { enabled: true, risePerSecond: STILL } });
    await a.release(await admit(a, capped), { status: 503, sent: true });
    await admit(a, capped);
    await admit(b, capped);
    expect(await b.acquire({ group: capped, leaseId: randomUUID() })).toMatchObject({ admitted: false, reason: 'concurrency' });
  });

  it('confirmStart checks the slowed cap, and the release step paces by the slowed interval and cap', async () => {
    const [a, b] = await fleet({ defaults: { rate: { max: 10, durationMs: 1000 }, concurrency: 4 }, safetyMarginMs: 0, spacingMargin: 0, adaptive: { enabled: true, risePerSecond: STILL } });
    const group = 'confirm.test';
    // Reserved 0, 100, 200 and 300 ms ahead at full pace (cap 4); then the pace is cut to 0.5 (cap 2) before they start.
    const leases = [await admit(a, group, 10_000), await admit(a, group, 10_000), await admit(b, group, 10_000), await admit(b, group, 10_000)];
    await b.release(leases[0]!, { status: 503, sent: true });
    // Once all three have come due, each counts as started: three in flight where two may be.
    await sleep(Math.max(0, leases[3]!.startAt - Date.now()) + 20);
    expect(await a.confirmStart(leases[1]!)).toMatchObject({ go: false, reason: 'concurrency' });
    // That lease went back: the other two fit under the slowed cap.
    expect(await a.confirmStart(leases[2]!)).toEqual({ go: true });
    expect(await b.confirmStart(leases[3]!)).toEqual({ go: true });

    const released = 'released.test';
    expect(await pacedLimits(b, [released])).toEqual([{ intervalMs: 100, concurrency: 4 }]);
    await a.release(await admit(a, released), { status: 503, sent: true });
    // Half pace: twice the interval (the pace creeps back up at STILL's rate, so a hair under), half the cap.
    const [slowed] = await pacedLimits(b, [released]);
    expect(slowed?.intervalMs).toBeGreaterThanOrEqual(190);
    expect(slowed?.intervalMs).toBeLessThanOrEqual(200);
    expect(slowed?.concurrency).toBe(2);
  });
});
