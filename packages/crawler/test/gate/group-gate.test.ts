import { setTimeout as sleep } from 'node:timers/promises';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { createGroupLimiter, limiterKeys, type Admission, type GroupLimiter } from '@crawlq/group-limiter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupGate, type GateLimiter } from '../../src/gate/group-gate.js';

let redis: TestRedis;
let limiter: GroupLimiter;
let gate: GroupGate;
beforeAll(async () => {
  redis = await startTestRedis();
  limiter = createGroupLimiter({ redis: redis.client(), prefix: 'gate-test-{g}' });
  gate = new GroupGate(limiter);
  // A 25% spacing margin gives a 25 ms late-start allowance (half of it, capped by half
  // the safety margin), so a loaded test machine does not miss the on-time case.
  await limiter.setPolicy({ defaults: { rate: { max: 5, durationMs: 1000 }, concurrency: null }, safetyMarginMs: 50, spacingMargin: 0.25 });
});
afterAll(async () => redis.stop());

/** Blocks the event loop, as a burst of parsing would. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/** The test's limiter, calling `onAcquired` after each acquire's reply arrives. */
function countingLimiter(onAcquired: (admission: Admission) => void): GateLimiter {
  return {
    acquire: async (request) => {
      const admission = await limiter.acquire(request);
      onAcquired(admission);
      return admission;
    },
    abandon: (lease) => limiter.abandon(lease),
    status: (group) => limiter.status(group),
    confirmStart: (lease) => limiter.confirmStart(lease),
    release: (lease, outcome) => limiter.release(lease, outcome),
    reportSlip: (group, lateMs) => limiter.reportSlip(group, lateMs),
  };
}

/**
 * A pass that the test needs admitted. On a loaded machine a timer can wake
 * past the late-start allowance twice in a row, and the gate then answers
 * "try later" instead of starting late; ask again as a worker would.
 */
async function admittedPass(on: GroupGate, group: string): Promise<Extract<Awaited<ReturnType<GroupGate['pass']>>, { admitted: true }>> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const answer = await on.pass(group, { maxInlineWaitMs: 500 });
    if (answer.admitted) return answer;
    await sleep(answer.retryInMs);
  }
  throw new Error(`${group}: not admitted in 20 passes`);
}

describe('GroupGate', () => {
  it('waits for a reserved start and lets it go on time', async () => {
    const group = 'on-time.test';
    let calls = 0;
    const counting = countingLimiter(() => (calls += 1));
    const countingGate = new GroupGate(counting);
    await admittedPass(countingGate, group);
    const before = performance.now();
    await admittedPass(countingGate, group);
    // 200 + max(50 / 5, 25% of 200) = 250 ms apart.
    expect(performance.now() - before).toBeGreaterThan(150);
    // On an idle machine both starts go on time (two asks, no late start). A
    // loaded one may wake a timer past the allowance: that start is given back
    // and asked for again, and every such ask is counted as a late start.
    expect((await limiter.status(group)).lateStarts).toBe(calls - 2);
  });

  it('gives back a start the event loop made late, and asks again', async () => {
    const group = 'late.test';
    let calls = 0;
    // The reply to the first acquire sits in a busy loop until 100 ms past its slot (the
    // allowance is 25 ms), wherever a loaded machine put that slot.
    const slowLoop = countingLimiter((admission) => {
      calls += 1;
      if (calls === 1) busy(admission.admitted ? Math.max(0, admission.startInMs) + 100 : 0);
    });
    await admittedPass(gate, group);
    const answer = await new GroupGate(slowLoop).pass(group, { maxInlineWaitMs: 500 });
    // The first reply was late for sure, so it was asked for again. A loaded
    // machine may make the retry late too, and after two late slots the gate
    // says "try later" (a denial for rate) rather than start late. Either way
    // every late slot was given back and counted, and only a slot that was
    // admitted (beside the first pass's) is held.
    expect(calls).toBe(2);
    if (!answer.admitted) expect(answer.reason).toBe('rate');
    const admitted = answer.admitted ? 1 : 0;
    const status = await limiter.status(group);
    expect(status.lateStarts).toBe(calls - admitted);
    expect(status.inFlight).toBe(1 + admitted);
  });

  it('asks for a grace up front once its starts have run late: twice its average lateness, none before', async () => {
    const graces: number[] = [];
    // The first reply sits in a busy loop for 40 ms, so that start is at least 40 ms late.
    const recording: GateLimiter = {
      ...countingLimiter(() => undefined),
      acquire: async (request) => {
        graces.push(request.graceMs ?? 0);
        const admission = await limiter.acquire(request);
        if (graces.length === 1) busy(40);
        return admission;
      },
    };
    await new GroupGate(recording).pass('graced.test', { maxInlineWaitMs: 500 });
    // The late start was given back (this limiter cannot retake), and asked for again with
    // a grace: the average moved a fifth of the way to 40 ms or more, and twice that is asked.
    expect(graces).toHaveLength(2);
    expect(graces[0]).toBe(0);
    expect(graces[1]).toBeGreaterThanOrEqual(16);
    expect(graces[1]).toBeLessThanOrEqual(200);
  });

  it('lets a start the event loop made late go at once when no later start was admitted, its group re-paced from it', async () => {
    const group = 'retaken.test';
    let calls = 0;
    // As above: the reply to the pass's first acquire sits in a busy loop until 300 ms past
    // its slot. (A fixed 300 ms was as little as 50 ms past a slot a whole spacing ahead.)
    const slowLoop: GateLimiter = {
      ...countingLimiter((admission) => {
        calls += 1;
        if (calls === 1) busy(admission.admitted ? Math.max(0, admission.startInMs) + 300 : 0);
      }),
      retakeLateStart: (lease) => limiter.retakeLateStart(lease),
    };
    await admittedPass(gate, group);
    const before = await limiter.status(group);
    const answer = await new GroupGate(slowLoop).pass(group, { maxInlineWaitMs: 500 });
    // One ask: the missed start was taken now instead of given back. (A loaded machine
    // may make the retaken start late too: then it is retaken again, with more grace.)
    const status = await limiter.status(group);
    expect(status.slippedStarts - before.slippedStarts).toBeGreaterThanOrEqual(1);
    if (calls === 1) {
      expect(answer.admitted).toBe(true);
      expect(status.lateStarts - before.lateStarts).toBe(0);
    }
    expect(status.inFlight).toBe(1 + (answer.admitted ? 1 : 0));
  });

  it("asks for a start with a release slot shortly before it (admitted near, not re-checked), records how far the group runs behind its slots, and asks no earlier than the group's next start as its last admission gave it", async () => {
    const group = 'due.test';
    const asked: number[] = [];
    const admissions: Admission[] = [];
    let confirms = 0;
    const counting: GateLimiter = {
      ...countingLimiter(() => undefined),
      acquire: async (request) => {
        asked.push(performance.now());
        const admission = await limiter.acquire(request);
        admissions.push(admission);
        return admission;
      },
      confirmStart: (lease) => {
        confirms += 1;
        return limiter.confirmStart(lease);
      },
      localTimeOf: (of, redisMs) => limiter.localTimeOf(of, redisMs),
    };
    const dueGate = new GroupGate(counting);
    const lagOf = async (): Promise<number> => Number(await redis.client().hget(limiterKeys('gate-test-{g}').group(group), 'lagMs'));
    // The group's pacing starts here; the next slot the gate keeps is one interval (250 ms) on.
    const first = await limiter.acquire({ group, leaseId: 'first' });
    if (!first.admitted) throw new Error('the first start was not admitted');
    await limiter.release(first.lease, { sent: true, status: 200 });
    /**
     * One pass: undefined when its start did not go on time (a start a loaded
     * machine made late is retaken and re-paces the group, and the figures
     * below hold only for starts on time; an idle machine checks them every
     * run), else its reserved start (Redis clock) and how far ahead of the
     * ask it was reserved (a start reserved 50 ms or more ahead is re-checked
     * when it comes).
     */
    const pass = async (due: number, lag: number, on = dueGate): Promise<{ startAt: number; aheadMs: number } | undefined> => {
      asked.length = 0;
      admissions.length = 0;
      const before = await limiter.status(group);
      const answer = await on.pass(group, { maxInlineWaitMs: 500, due, lag });
      if (answer.admitted) await answer.lease.release({ status: 200 });
      // Each ask waited for its slot and lag: none went before it was near (35 ms ahead, 5 ms of timer slack).
      expect(asked[0]! - (limiter.localTimeOf(group, due + lag) ?? Number.NaN)).toBeGreaterThanOrEqual(-40);
      const after = await limiter.status(group);
      const admission = admissions.at(-1);
      if (!answer.admitted || admission?.admitted !== true || after.slippedStarts !== before.slippedStarts || after.lateStarts !== before.lateStarts) return undefined;
      return { startAt: admission.startAt, aheadMs: admission.startInMs };
    };
    /** Re-checked when it comes exactly when reserved 50 ms or more ahead; a start within a millisecond of that says nothing. */
    const expectConfirmed = (aheadMs: number, before: number): void => {
      if (aheadMs >= 51) expect(confirms).toBe(before + 1);
      else if (aheadMs <= 49) expect(confirms).toBe(before);
    };
    // On its slot: asked for 35 ms before it, admitted without a second round trip, no lag.
    const onSlot = await pass(first.startAt + 250, 0);
    if (onSlot === undefined) return;
    expect(onSlot.aheadMs).toBeLessThan(50);
    expect(confirms).toBe(0);
    expect(await lagOf()).toBe(0);
    // A slot the gate does not keep (given already: the start goes one interval after the last one),
    // asked for by another process's gate, which has not seen the group's pace: the lag recorded for
    // the fleet is how far behind that slot it was reserved.
    const behind = await pass(first.startAt + 250, 0, new GroupGate(counting));
    if (behind === undefined || behind.aheadMs <= 0) return;
    expect(behind.startAt - (first.startAt + 250)).toBeGreaterThanOrEqual(250);
    expect(await lagOf()).toBeCloseTo(behind.startAt - (first.startAt + 250), 0);
    // Reserved that far ahead on an idle machine (about 250 ms): re-checked when it comes.
    expectConfirmed(behind.aheadMs, 0);
    const confirmed = confirms;
    // The next slot with that lag (as the release step would hand it out): near again, not re-checked.
    const withLag = await pass(first.startAt + 500, await lagOf());
    if (withLag === undefined) return;
    expect(withLag.aheadMs).toBeLessThan(50);
    expect(confirms).toBe(confirmed);
    // A slot long past (a job that waited for a worker), on the gate that admitted the group's last
    // start: asked for shortly before the group's next start (one interval after that one), so
    // admitted near and not re-checked, where asked at once it would be reserved about 250 ms ahead.
    const stale = await pass(first.startAt + 250, 0);
    if (stale === undefined) return;
    expect(asked[0]! - (limiter.localTimeOf(group, withLag.startAt + 250) ?? Number.NaN)).toBeGreaterThanOrEqual(-40);
    expect(stale.startAt - withLag.startAt).toBeGreaterThanOrEqual(250);
    expect(stale.aheadMs).toBeLessThan(50);
    expect(confirms).toBe(confirmed);
  });

  it('gives the lease back when the wait is aborted', async () => {
    const group = 'aborted.test';
    await admittedPass(gate, group);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(gate.pass(group, { maxInlineWaitMs: 500, signal: controller.signal })).rejects.toThrow();
    expect((await limiter.status(group)).inFlight).toBe(1);
  });

  it('a lease is released once, counts as started only when sent, and drops a status that is no HTTP status', async () => {
    const group = 'lease.test';
    const unsent = await admittedPass(gate, group);
    const sent = await admittedPass(gate, group);
    expect((await limiter.status(group)).inFlight).toBe(2);
    await unsent.lease.release({ status: 200 });
    sent.lease.markSent();
    sent.lease.markSent();
    // A `000` status line: the limiter would refuse it as an argument and the
    // slot would stay held until its lease expires.
    await sent.lease.release({ status: 0 });
    await sent.lease.release({ status: 200 });
    const status = await limiter.status(group);
    expect(status.inFlight).toBe(0);
    expect(status.started).toBe(1);
    expect(sent.lease.sentAt).toBeTypeOf('number');
    expect(unsent.lease.sentAt).toBeUndefined();
  });
});
