import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, type LimitPolicyInput } from '../src/index.js';
import { sleep, testPrefix } from './support.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

// A job taken over after its worker died asks the gate again for the URL it
// had in hand; should the same lease id come back, the second start is a new
// request at the server and must take a start slot of its own.
describe('a lease id asked for again', () => {
  const policy: LimitPolicyInput = { defaults: { rate: { max: 1, durationMs: 1000 }, burst: 1, concurrency: 2 }, leaseMs: 300 };

  it.each([
    ['released', true],
    ['left to expire (its worker killed)', false],
  ])('after its first start was %s, it takes a new start slot (T\' later), not the old one', async (_what, released) => {
    const limiter = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await limiter.setPolicy(policy);
    const first = await limiter.acquire({ group: 'reuse.test', leaseId: 'unit-1', maxInlineWaitMs: 2_000 });
    expect(first.admitted).toBe(true);
    if (!first.admitted) return;
    if (released) await limiter.release(first.lease, { status: 200, sent: true });
    else await sleep(350);
    const again = await limiter.acquire({ group: 'reuse.test', leaseId: 'unit-1', maxInlineWaitMs: 2_000 });
    expect(again.admitted).toBe(true);
    if (!again.admitted) return;
    // 1/1s paces starts T' = 1050 ms apart (1 s plus the 5 % spacing margin),
    // far more than the lease's 300 ms: the old slot is no start slot for it.
    expect(again.startAt - first.startAt).toBeGreaterThanOrEqual(1050 - 0.01);
  });

  it('while its first start still holds the lease, a second acquire with the same id still takes a new start slot', async () => {
    const limiter = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await limiter.setPolicy(policy);
    const first = await limiter.acquire({ group: 'reuse.test', leaseId: 'unit-2', maxInlineWaitMs: 2_000 });
    const again = await limiter.acquire({ group: 'reuse.test', leaseId: 'unit-2', maxInlineWaitMs: 2_000 });
    expect(first.admitted && again.admitted).toBe(true);
    if (!first.admitted || !again.admitted) return;
    expect(again.startAt - first.startAt).toBeGreaterThanOrEqual(1050 - 0.01);
  });
});
