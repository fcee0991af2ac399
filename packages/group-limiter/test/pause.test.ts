import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createGroupLimiter, limiterKeys, type Admission, type GroupLimiter, type LimiterKeys } from '../src/index.js';
import { sleep, testPrefix } from './support.js';

let server: TestRedis;
let limiter: GroupLimiter;
let inspector: Redis;
let keys: LimiterKeys;
beforeAll(async () => {
  server = await startTestRedis();
  inspector = server.client();
  const prefix = testPrefix();
  keys = limiterKeys(prefix);
  limiter = createGroupLimiter({ redis: server.client(), prefix });
  await limiter.setPolicy({
    defaults: { rate: null, concurrency: null },
    backoff429: { baseMs: 100, maxMs: 400 },
    maxPauseMs: 2000,
  });
});
afterAll(async () => server.stop());

let leaseCounter = 0;
const take = (group: string): Promise<Admission> => limiter.acquire({ group, leaseId: `lease-${(leaseCounter += 1)}` });

/** Acquires, waiting out denials, and returns the lease. */
async function takeWhenAllowed(group: string): Promise<{ group: string; leaseId: string }> {
  for (;;) {
    const admission = await take(group);
    if (admission.admitted) return admission.lease;
    await sleep(admission.retryInMs);
  }
}

describe('pauses', () => {
  it('429 with Retry-After pauses only that group, for about that long', async () => {
    const lease = await takeWhenAllowed('throttled.test');
    await limiter.release(lease, { status: 429, retryAfterMs: 1000 });
    const denied = await take('throttled.test');
    expect(denied).toMatchObject({ admitted: false, reason: 'paused' });
    if (denied.admitted) return;
    expect(denied.pausedForMs).toBeGreaterThan(500);
    expect(denied.pausedForMs).toBeLessThanOrEqual(1000);
    expect(denied.retryInMs).toBeGreaterThanOrEqual(denied.pausedForMs ?? 0);
    expect((await take('other.test')).admitted).toBe(true);
    const status = await limiter.status('throttled.test');
    expect(status.pauseReason).toBe('Retry-After on 429');
    await sleep((denied.pausedForMs ?? 0) + 50);
    expect((await take('throttled.test')).admitted).toBe(true);
  });

  it('caps Retry-After at maxPauseMs; 503 with Retry-After pauses too', async () => {
    await limiter.release(await takeWhenAllowed('capped.test'), { status: 503, retryAfterMs: 60_000 });
    const denied = await take('capped.test');
    expect(denied.admitted).toBe(false);
    if (denied.admitted) return;
    expect(denied.pausedForMs).toBeLessThanOrEqual(2000);
    expect(denied.pausedForMs).toBeGreaterThan(1500);
    expect((await limiter.status('capped.test')).strikes).toBe(0);
  });

  it('repeated 429s without Retry-After pause exponentially; a success resets the strikes', async () => {
    const group = 'backoff.test';
    const pauses: number[] = [];
    for (let strike = 1; strike <= 4; strike += 1) {
      await limiter.release(await takeWhenAllowed(group), { status: 429 });
      const status = await limiter.status(group);
      expect(status.strikes).toBe(strike);
      expect(status.pausedUntil).not.toBeNull();
      const denied = await take(group);
      expect(denied).toMatchObject({ admitted: false, reason: 'paused' });
      if (!denied.admitted) expect(denied.pausedForMs).toBeLessThanOrEqual(100 * 2 ** (strike - 1));
      // Redis-internal: the exact pause, from the strike's time to the pause end.
      const [pausedUntil, strikeAt] = await inspector.hmget(keys.group(group), 'pausedUntil', 'strikeAt');
      pauses.push(Number(pausedUntil) - Number(strikeAt));
    }
    // base 100, doubling, capped at 400.
    [100, 200, 400, 400].forEach((expected, i) => expect(pauses[i]).toBeCloseTo(expected, 1));
    await limiter.release(await takeWhenAllowed(group), { status: 200 });
    expect((await limiter.status(group)).strikes).toBe(0);
    await limiter.release(await takeWhenAllowed(group), { status: 429 });
    const again = await take(group);
    expect(again.admitted).toBe(false);
    if (!again.admitted) expect(again.pausedForMs).toBeLessThanOrEqual(100);
  });

  it('counts 429s from requests that were in flight together as one strike', async () => {
    const group = 'episode.test';
    const first = await takeWhenAllowed(group);
    const second = await takeWhenAllowed(group);
    const third = await takeWhenAllowed(group);
    await limiter.release(first, { status: 429 });
    await limiter.release(second, { status: 429 });
    expect((await limiter.status(group)).strikes).toBe(1);
    // A success from that same episode does not reset the strike either.
    await limiter.release(third, { status: 200 });
    expect((await limiter.status(group)).strikes).toBe(1);
    // A request that started after the strike counts again.
    await limiter.release(await takeWhenAllowed(group), { status: 429 });
    expect((await limiter.status(group)).strikes).toBe(2);
  });

  it('other statuses and missing outcomes leave strikes alone or reset them as documented', async () => {
    const group = 'mixed.test';
    await limiter.release(await takeWhenAllowed(group), { status: 429 });
    await limiter.release(await takeWhenAllowed(group), { status: 503 }); // no Retry-After: neither adds nor resets
    await limiter.release(await takeWhenAllowed(group)); // no response at all
    expect((await limiter.status(group)).strikes).toBe(1);
    await limiter.release(await takeWhenAllowed(group), { status: 404 });
    expect((await limiter.status(group)).strikes).toBe(0);
  });

  it('admin pause and resume', async () => {
    const group = 'maintenance.test';
    await limiter.pause(group, 60_000, 'maintenance window'); // capped at maxPauseMs = 2000
    const denied = await take(group);
    expect(denied).toMatchObject({ admitted: false, reason: 'paused' });
    const status = await limiter.status(group);
    expect(status.pauseReason).toBe('maintenance window');
    expect(status.pausedUntil).toBeGreaterThan(Date.now() + 1500);
    expect(status.pausedUntil).toBeLessThanOrEqual(Date.now() + 2005); // ms rounding of the Redis clock
    await limiter.resume(group);
    expect((await take(group)).admitted).toBe(true);
    expect((await limiter.status(group)).pausedUntil).toBeNull();
  });
});

describe('confirmStart', () => {
  it('stops a start reserved before a pause began, and gives its lease back', async () => {
    const admission = await take('confirm-g');
    expect(admission.admitted).toBe(true);
    if (!admission.admitted) return;
    expect(await limiter.confirmStart(admission.lease)).toEqual({ go: true });
    expect((await limiter.status('confirm-g')).inFlight).toBe(1);
    await limiter.pause('confirm-g', 1_500);
    const check = await limiter.confirmStart(admission.lease);
    expect(check).toMatchObject({ go: false, reason: 'paused' });
    if (!check.go) expect(check.retryInMs).toBeGreaterThan(1_000);
    expect((await limiter.status('confirm-g')).inFlight).toBe(0);
  });
});
