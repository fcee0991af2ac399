import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, createShardedGroupLimiter, createShardLimiters, GroupLimiterArgumentError, InvalidLimitPolicyError, normalizePolicy, type GroupLimiter, type LimitPolicyInput } from '../src/index.js';
import { maxInWindow, sleep, testPrefix } from './support.js';

// The server level: a start needs its group and its server (the address the
// connection goes to) to admit it, in one script. Judged on the Redis clock
// (reserved starts), which every limiter shares, so the bounds hold at any speed.
let redis: TestRedis;
let inspector: Redis;
beforeAll(async () => {
  redis = await startTestRedis();
  inspector = redis.client();
});
afterAll(async () => redis.stop());

const GROUP_FAST: LimitPolicyInput['defaults'] = { rate: { max: 20, durationMs: 1000 }, burst: 1, concurrency: null };

/**
 * The server's spacing alone (10/s, no margins): starts exactly 100 ms apart
 * at the server. Each group's own rate (1/s) is far slower, so only the
 * server level can hold the next start back.
 */
const SERVER_SPACED: LimitPolicyInput = {
  defaults: { rate: { max: 1, durationMs: 1000 }, burst: 1, concurrency: null },
  safetyMarginMs: 0,
  spacingMargin: 0,
  servers: { defaults: { rate: { max: 10, durationMs: 1000 } } },
};

async function fleet(size: number, policy: LimitPolicyInput): Promise<GroupLimiter[]> {
  const prefix = testPrefix();
  const limiters = Array.from({ length: size }, () => createGroupLimiter({ redis: redis.client(), prefix }));
  await limiters[0]!.setPolicy(policy);
  return limiters;
}

/**
 * Loops asking for starts of `group` at `address` until `until` (or, given
 * `enough`, until that many starts are recorded), recording reserved starts
 * and denial reasons.
 */
async function hammer(limiter: GroupLimiter, group: string, address: string, until: number, out: { starts: number[]; reasons: Set<string>; enough?: number; inFlight?: { now: number; peak: number } }): Promise<void> {
  while (performance.now() < until && out.starts.length < (out.enough ?? Infinity)) {
    const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 150, address });
    if (!admission.admitted) {
      out.reasons.add(admission.reason);
      await sleep(Math.min(admission.retryInMs, 100));
      continue;
    }
    // A start reserved further ahead is checked again when it comes (its slot
    // was not counted against the caps yet), as a worker's gate does.
    if (admission.confirmBeforeStart) {
      await sleep(Math.max(0, admission.localStartAt - performance.now()));
      const check = await limiter.confirmStart(admission.lease);
      if (!check.go) {
        out.reasons.add(check.reason);
        await sleep(Math.min(check.retryInMs, 100));
        continue;
      }
    }
    out.starts.push(admission.startAt);
    await sleep(Math.max(0, admission.localStartAt - performance.now()));
    if (out.inFlight) {
      out.inFlight.now += 1;
      out.inFlight.peak = Math.max(out.inFlight.peak, out.inFlight.now);
    }
    await sleep(30);
    if (out.inFlight) out.inFlight.now -= 1;
    await limiter.release(admission.lease, { status: 200 });
  }
}

describe('the server level of the gate', () => {
  it('holds one rate over every group behind one address, while a group on another address keeps its own', { timeout: 60_000 }, async () => {
    const limiters = await fleet(3, {
      defaults: GROUP_FAST,
      servers: { defaults: { rate: { max: 10, durationMs: 1000 } }, rules: [{ cidr: '127.0.0.41/32', rate: { max: 50, durationMs: 1000 } }] },
    });
    const shared = { starts: [] as number[], reasons: new Set<string>() };
    const alone = { starts: [] as number[], reasons: new Set<string>() };
    const until = performance.now() + 2_500;
    const groups = ['a.test', 'b.test', 'c.test', 'd.test', 'e.test'];
    await Promise.all([
      ...limiters.flatMap((limiter) => groups.map((group) => hammer(limiter, group, '127.0.0.40', until, shared))),
      ...limiters.map((limiter) => hammer(limiter, 'other.test', '127.0.0.41', until, alone)),
    ]);
    // Five groups at 20/s each would start 100 a second: their server took at most 10 in any second.
    expect(shared.starts.length).toBeGreaterThanOrEqual(10);
    expect(maxInWindow(shared.starts, 1000)).toBeLessThanOrEqual(10);
    expect(shared.reasons.has('server-rate')).toBe(true);
    // The group alone on its server (a rule gives that one 50/s) is bound by its own rate only (20/s), never by the shared server.
    expect(alone.reasons.has('server-rate')).toBe(false);
    expect(maxInWindow(alone.starts, 1000)).toBeLessThanOrEqual(20);

    const servers = await limiters[1]!.servers();
    expect(servers.map((server) => server.server)).toEqual(['127.0.0.40', '127.0.0.41']);
    expect(servers[0]).toMatchObject({ limits: { rate: { max: 10, durationMs: 1000 }, concurrency: null }, inFlight: null, admitted: shared.starts.length });
    expect(servers[0]!.deferred).toBeGreaterThan(0);
  });

  it('caps requests in flight per server across groups, and gives the slot back on release', { timeout: 60_000 }, async () => {
    const limiters = await fleet(2, { defaults: GROUP_FAST, servers: { defaults: { rate: null, concurrency: 2 } } });
    const out = { starts: [] as number[], reasons: new Set<string>(), inFlight: { now: 0, peak: 0 } };
    const until = performance.now() + 1_500;
    await Promise.all(limiters.flatMap((limiter) => ['a.test', 'b.test', 'c.test'].map((group) => hammer(limiter, group, '127.0.0.40', until, out))));
    expect(out.inFlight.peak).toBeLessThanOrEqual(2);
    expect(out.starts.length).toBeGreaterThan(4);
    expect(out.reasons.has('server-concurrency')).toBe(true);
    const [status] = await limiters[0]!.servers();
    expect(status).toMatchObject({ server: '127.0.0.40', inFlight: 0, limits: { concurrency: 2 } });
  });

  it('lets an unlimited range through with its group limits only, and keys IPv6 by its /64', { timeout: 60_000 }, async () => {
    const [limiter] = await fleet(1, {
      defaults: GROUP_FAST,
      servers: { defaults: { rate: { max: 1, durationMs: 1000 } }, rules: [{ cidr: '127.0.0.0/24', unlimited: true, name: 'test-cdn' }] },
    });
    // Eleven starts at a server whose default rate (1/s) would deny all but the
    // first: counted, not timed, so a slow machine takes longer, not fewer.
    const out = { starts: [] as number[], reasons: new Set<string>(), enough: 11 };
    await Promise.all(['a.test', 'b.test'].map((group) => hammer(limiter!, group, '127.0.0.9', performance.now() + 30_000, out)));
    expect(out.reasons.has('server-rate')).toBe(false);
    expect(out.starts.length).toBeGreaterThan(10);
    // Nothing is read or written for a server without limits.
    expect(await limiter!.servers()).toEqual([]);

    const first = await limiter!.acquire({ group: 'v6-a.test', leaseId: randomUUID(), address: '2001:db8:1:2::a' });
    const second = await limiter!.acquire({ group: 'v6-b.test', leaseId: randomUUID(), address: '2001:db8:1:2:ffff::b' });
    expect(first.admitted).toBe(true);
    expect(second).toMatchObject({ admitted: false, reason: 'server-rate' });
    expect((await limiter!.servers()).map((server) => server.server)).toEqual(['2001:db8:1:2::/64']);
  });

  it('refuses an address that is not one, and a bad rule, with a clear error', async () => {
    const [limiter] = await fleet(1, { servers: { defaults: { rate: { max: 1, durationMs: 1000 } } } });
    await expect(limiter!.acquire({ group: 'a.test', leaseId: randomUUID(), address: 'not-an-ip' })).rejects.toThrow(GroupLimiterArgumentError);
    expect(() => normalizePolicy({ servers: { rules: [{ cidr: '10.0.0.0/99' }], prefixV6: 200 } })).toThrow(InvalidLimitPolicyError);
    expect(() => normalizePolicy({ servers: { rules: [{ cidr: '10.0.0.0/99' }] } })).toThrow(/servers\.rules\[0\]\.cidr/);
  });

  it('splits a server rate over shards, each pacing its part, the whole held', { timeout: 60_000 }, async () => {
    const prefixes = [testPrefix(), testPrefix()];
    const shards = createShardLimiters(redis.client(), prefixes);
    const sharded = createShardedGroupLimiter(shards, (group) => (group < 'm' ? 0 : 1));
    await sharded.setPolicy({ defaults: GROUP_FAST, servers: { defaults: { rate: { max: 10, durationMs: 1000 } } } });
    const out = { starts: [] as number[], reasons: new Set<string>() };
    await Promise.all(['a.test', 'b.test', 'x.test', 'y.test'].map((group) => hammer(sharded, group, '127.0.0.40', performance.now() + 2_500, out)));
    expect(maxInWindow(out.starts, 1000)).toBeLessThanOrEqual(10);
    const [status] = await sharded.servers();
    expect(status).toMatchObject({ server: '127.0.0.40', admitted: out.starts.length });
  });

  it('checks a start reserved ahead against its server\'s concurrency cap again when it comes', { timeout: 60_000 }, async () => {
    // One start per 2 s at the server, one request in flight there at most.
    const [limiter] = await fleet(1, { defaults: { rate: null, concurrency: null }, safetyMarginMs: 0, spacingMargin: 0, servers: { defaults: { rate: { max: 1, durationMs: 2000 }, concurrency: 1 } } });
    const ask = (group: string) => limiter!.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 5_000, address: '127.0.0.71' });
    const lead = await ask('lead.test');
    if (!lead.admitted) throw new Error('the first start was not admitted');
    await limiter!.release(lead.lease);
    // Both reserved ahead, before either holds its slot: acquire counts neither against the cap.
    const first = await ask('a.test');
    const second = await ask('b.test');
    if (!first.admitted) throw new Error('a.test was not admitted');
    expect(first.confirmBeforeStart).toBe(true);
    await sleep(Math.max(0, first.localStartAt - performance.now()));
    expect(await limiter!.confirmStart(first.lease)).toEqual({ go: true });
    // a.test is in flight when b.test's start comes: b.test may not go (denied at once, on a slow
    // machine that asked late, or when its start is confirmed).
    let secondWent = false;
    if (second.admitted) {
      await sleep(Math.max(0, second.localStartAt - performance.now()));
      const check = await limiter!.confirmStart(second.lease);
      secondWent = check.go;
      if (!check.go) expect(check.reason).toBe('server-concurrency');
    } else {
      expect(second.reason).toBe('server-concurrency');
    }
    expect(secondWent).toBe(false);
    const [status] = await limiter!.servers();
    expect(status).toMatchObject({ server: '127.0.0.71', inFlight: 1 });
    await limiter!.release(first.lease);
  });

  describe('a start that goes late', () => {
    const SERVER = '127.0.0.70';
    const admit = async (limiter: GroupLimiter, group: string) => {
      const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 1_000, address: SERVER });
      if (!admission.admitted) throw new Error(`${group} was not admitted: ${admission.reason}`);
      return admission;
    };
    const untilLate = (localStartAt: number, ms: number) => sleep(Math.max(0, localStartAt + ms - performance.now()));

    it('is not taken again at the group level when another group holds the server\'s next slot', async () => {
      const [limiter] = await fleet(1, SERVER_SPACED);
      const missed = await admit(limiter!, 'a.test');
      const next = await admit(limiter!, 'b.test');
      expect(next.startAt - missed.startAt).toBeGreaterThanOrEqual(100 - 0.01);
      await untilLate(missed.localStartAt, 60);
      // Its group admitted nothing after it, but its server did: taken now, it would
      // start 40 ms before b.test's start at the server. It is given back instead.
      const retaken = await limiter!.retakeLateStart(missed.lease);
      const starts = [retaken?.startAt ?? Number.NaN, next.startAt].filter((start) => !Number.isNaN(start));
      for (let i = 1; i < starts.length; i += 1) expect(Math.abs(starts[i]! - starts[i - 1]!)).toBeGreaterThanOrEqual(100 - 0.01);
      expect(retaken).toBeNull();
      expect(await limiter!.status('a.test')).toMatchObject({ inFlight: 0, lateStarts: 1, slippedStarts: 0 });
    });

    it('is taken again while within the lateness its server\'s window allows, though another group holds the server\'s next slot', async () => {
      // A 2 s safety margin: the server spaces its starts 300 ms apart, and a start may go 1 s late
      // there (10 starts 300 ms apart still span far more than 1 s).
      const [limiter] = await fleet(1, { ...SERVER_SPACED, safetyMarginMs: 2_000 });
      const missed = await admit(limiter!, 'a.test');
      const next = await admit(limiter!, 'b.test');
      expect(missed.lease.serverLateMs).toBeCloseTo(1_000, 6);
      await untilLate(missed.localStartAt, 30);
      const retaken = await limiter!.retakeLateStart(missed.lease);
      expect(retaken).not.toBeNull();
      // Taken again when asked, past its slot and within the second the server allows. (Before b.test's
      // start when asked in time; a loaded machine's sleep overshot past it.)
      expect(retaken!.startAt).toBeGreaterThan(missed.startAt);
      expect(retaken!.startAt - missed.startAt).toBeLessThanOrEqual(1_000);
      // The server's pacing stays where it was: the next start there follows b.test's.
      const third = await admit(limiter!, 'c.test');
      expect(third.startAt - next.startAt).toBeGreaterThanOrEqual(300 - 0.01);
    });

    it('taken again, moves its server\'s pacing back with it, so the next start there is a whole spacing after it', async () => {
      const [limiter] = await fleet(1, SERVER_SPACED);
      const missed = await admit(limiter!, 'a.test');
      expect(missed.lease.server).toBe(SERVER);
      await untilLate(missed.localStartAt, 60);
      const retaken = await limiter!.retakeLateStart(missed.lease);
      expect(retaken).not.toBeNull();
      const next = await admit(limiter!, 'b.test');
      expect(next.startAt - retaken!.startAt).toBeGreaterThanOrEqual(100 - 0.01);
    });

    it('taken again with a grace, moves its server\'s pacing back by the grace as well', async () => {
      const [limiter] = await fleet(1, SERVER_SPACED);
      const missed = await admit(limiter!, 'a.test');
      await untilLate(missed.localStartAt, 60);
      // The caller may go up to 200 ms past the retaken start: the server's next start keeps its spacing from that.
      const retaken = await limiter!.retakeLateStart(missed.lease, 200);
      expect(retaken).not.toBeNull();
      const next = await admit(limiter!, 'b.test');
      expect(next.startAt - retaken!.startAt).toBeGreaterThanOrEqual(100 + 200 - 0.01);
    });

    it('is given back when its grace would take it past the lateness its server allows a start that is not the server\'s latest', async () => {
      // As above, a start may go 1 s late at the server; 30 ms late plus a 990 ms grace is more.
      const [limiter] = await fleet(1, { ...SERVER_SPACED, safetyMarginMs: 2_000 });
      const missed = await admit(limiter!, 'a.test');
      await admit(limiter!, 'b.test');
      await untilLate(missed.localStartAt, 30);
      expect(await limiter!.retakeLateStart(missed.lease, 990)).toBeNull();
    });

    it('reported as a slip, moves its server\'s pacing back as well as its group\'s', async () => {
      const [limiter] = await fleet(1, SERVER_SPACED);
      const slipped = await admit(limiter!, 'a.test');
      // Far more than this test's own round trips take, however slow: the next start's place is the slip's doing.
      await limiter!.reportSlip('a.test', 5_000, slipped.lease.server);
      const next = await limiter!.acquire({ group: 'b.test', leaseId: randomUUID(), maxInlineWaitMs: 10_000, address: SERVER });
      expect(next.admitted && next.startAt - slipped.startAt).toBeGreaterThanOrEqual(5_100 - 0.01);
      if (next.admitted) await limiter!.release(next.lease);
    });
  });

  /** Commands inside Redis per admission (scripts' own calls, not EVALSHA) for `admissions` after `warm` ones, at `address`. */
  const commandsPerAdmission = async (policy: LimitPolicyInput, address: string | undefined, groups: { warm: readonly string[]; counted: (i: number) => string }): Promise<number> => {
    const [limiter] = await fleet(1, policy);
    const ask = (group: string) => limiter!.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: 100, ...(address ? { address } : {}) });
    for (const group of groups.warm) await ask(group);
    await inspector.config('RESETSTAT');
    for (let i = 0; i < 20; i += 1) expect((await ask(groups.counted(i))).admitted).toBe(true);
    const stats = await inspector.info('commandstats');
    let calls = 0;
    for (const match of stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
      if (!['evalsha', 'eval', 'info', 'config', 'script'].includes(match[1]!)) calls += Number(match[2]);
    }
    return calls / 20;
  };
  const RATE_ONLY = { defaults: { rate: null, burst: 1, concurrency: null }, servers: { defaults: { rate: { max: 1000, durationMs: 1000 } } } } satisfies LimitPolicyInput;

  it('costs two commands inside Redis per admission for a rate-only server level that several groups use', { timeout: 60_000 }, async () => {
    // Two groups warm it up: the second ends the first one's hold (see below).
    const groups = { warm: ['warm.test', 'warm2.test'], counted: (i: number) => `g${i}.test` };
    const without = await commandsPerAdmission({ defaults: RATE_ONLY.defaults }, undefined, groups);
    const withServer = await commandsPerAdmission(RATE_ONLY, '127.0.0.50', groups);
    expect(withServer - without).toBeGreaterThan(0);
    expect(withServer - without).toBeLessThanOrEqual(2);
  });

  describe('a server that one group alone uses', () => {
    it('costs no command of its own per admission, and its status still counts every start', { timeout: 60_000 }, async () => {
      const alone = { warm: ['solo.test'], counted: () => 'solo.test' };
      const without = await commandsPerAdmission({ defaults: RATE_ONLY.defaults }, undefined, alone);
      const held = await commandsPerAdmission(RATE_ONLY, '127.0.0.51', alone);
      expect(held).toBeCloseTo(without, 6);
      // The same server used by a second group costs its two commands again (the check can tell).
      const shared = await commandsPerAdmission(RATE_ONLY, '127.0.0.52', { warm: ['solo.test', 'other.test'], counted: () => 'solo.test' });
      expect(shared - without).toBeGreaterThan(1);
    });

    const ADDRESS = '127.0.0.53';

    it('keeps its spacing when a second group comes: the first start of that group follows the holder\'s latest, reserved ahead', { timeout: 60_000 }, async () => {
      const [holder, newcomer] = await fleet(2, SERVER_SPACED);
      const starts: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const admission = await holder!.acquire({ group: 'a.test', leaseId: randomUUID(), maxInlineWaitMs: 5_000, address: ADDRESS });
        if (!admission.admitted) throw new Error(`a.test was not admitted: ${admission.reason}`);
        starts.push(admission.startAt);
      }
      // a.test's third start is reserved about 2 s ahead; the server must not start b.test before it and its spacing.
      const next = await newcomer!.acquire({ group: 'b.test', leaseId: randomUUID(), maxInlineWaitMs: 5_000, address: ADDRESS });
      if (!next.admitted) throw new Error(`b.test was not admitted: ${next.reason}`);
      expect(next.startAt - Math.max(...starts)).toBeGreaterThanOrEqual(100 - 0.01);
      // Every start is counted at the server, those of the hold included, and the last is b.test's.
      const [status] = await newcomer!.servers();
      expect(status).toMatchObject({ server: ADDRESS, admitted: 4, lastAdmitAt: next.startAt });
      // And from now on both groups are spaced at the server as any two are.
      const third = await holder!.acquire({ group: 'a.test', leaseId: randomUUID(), maxInlineWaitMs: 5_000, address: ADDRESS });
      if (!third.admitted) throw new Error(`a.test was not admitted: ${third.reason}`);
      expect(third.startAt - next.startAt).toBeGreaterThanOrEqual(100 - 0.01);
    });

    it('reports the holder\'s starts in its status while the hold lasts', async () => {
      const [limiter] = await fleet(1, SERVER_SPACED);
      let last = 0;
      for (let i = 0; i < 2; i += 1) {
        const admission = await limiter!.acquire({ group: 'a.test', leaseId: randomUUID(), maxInlineWaitMs: 5_000, address: '127.0.0.54' });
        if (!admission.admitted) throw new Error(`a.test was not admitted: ${admission.reason}`);
        last = admission.startAt;
      }
      expect(await limiter!.servers()).toEqual([expect.objectContaining({ server: '127.0.0.54', admitted: 2, lastAdmitAt: last })]);
    });
  });
});
