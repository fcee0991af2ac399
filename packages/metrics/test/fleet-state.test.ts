import { Frontier } from '@crawlq/frontier';
import { createGroupLimiter } from '@crawlq/group-limiter';
import { openCrawlQueue } from '@crawlq/queue';
import { gateKeyPrefix } from '@crawlq/redis';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetStateReader } from '../src/index.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});

const job = (url: string) => ({ url, depth: 0, group: 'a.test', seed: url });

describe('FleetStateReader (real Redis, real BullMQ queue)', () => {
  it('counts URLs by state, with due = backlog + waiting + delayed within the next minute', async () => {
    const namespace = `fleet-${Date.now()}`;
    const queue = openCrawlQueue({ url: redis.url }, namespace);
    try {
      await queue.add('fetch', job('http://a.test/1'));
      await queue.add('fetch', job('http://a.test/2'));
      await queue.add('fetch', job('http://a.test/3'), { delay: 10_000 });
      await queue.add('fetch', job('http://a.test/4'), { delay: 30_000 });
      await queue.add('fetch', job('http://a.test/5'), { delay: 10 * 60_000 });
      const client = redis.client();
      const reader = new FleetStateReader({ redis: client, namespace, maxAgeMs: 0 });
      expect((await reader.read()).queue).toEqual({ backlog: 0, waiting: 2, delayed: 3, active: 0, due: 4 });
      // Seven URLs admitted into the frontier's backlogs, not yet released as jobs.
      const limiter = createGroupLimiter({ redis: client, prefix: gateKeyPrefix(namespace) });
      const frontier = new Frontier({
        redis: client,
        queue,
        pacer: limiter,
        namespace,
        settings: { scope: 'any', include: [], exclude: [], maxDepth: 1, groupBy: 'host', sortQuery: false, jobPolicy: { attempts: 1, backoffMs: 1 } },
      });
      await frontier.addSeeds(Array.from({ length: 7 }, (_, i) => `http://b.test/${i}`));
      const state = await reader.read();
      expect(state.queue).toEqual({ backlog: 7, waiting: 2, delayed: 3, active: 0, due: 11 });
      expect(state.groups).toEqual({ active: 0, paused: 0, blocked: 0, slowed: 0 });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('counts groups in flight, at their concurrency cap and paused', async () => {
    const namespace = `groups-${Date.now()}`;
    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix(namespace) });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 2 } });
    const first = await limiter.acquire({ group: 'busy.test', leaseId: 'l1' });
    const second = await limiter.acquire({ group: 'busy.test', leaseId: 'l2' });
    const third = await limiter.acquire({ group: 'half.test', leaseId: 'l3' });
    expect([first.admitted, second.admitted, third.admitted]).toEqual([true, true, true]);
    await limiter.pause('paused.test', 60_000, 'test');
    const reader = new FleetStateReader({ redis: redis.client(), namespace, maxAgeMs: 0 });
    expect((await reader.read()).groups).toEqual({ active: 2, paused: 1, blocked: 1, slowed: 0 });
  });

  it('counts groups an adaptive pace slowed down, at the cap the pace leaves them', async () => {
    const namespace = `slowed-${Date.now()}`;
    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix(namespace) });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 4 }, adaptive: { enabled: true, risePerSecond: 0.0001 } });
    const failed = await limiter.acquire({ group: 'struggling.test', leaseId: 'f1' });
    if (!failed.admitted) throw new Error('not admitted');
    await limiter.release(failed.lease, { status: 503, sent: true });
    // Cap 4 at half pace: two in flight fill it.
    await limiter.acquire({ group: 'struggling.test', leaseId: 's1' });
    await limiter.acquire({ group: 'struggling.test', leaseId: 's2' });
    await limiter.acquire({ group: 'fine.test', leaseId: 'f2' });
    await limiter.acquire({ group: 'fine.test', leaseId: 'f3' });
    const reader = new FleetStateReader({ redis: redis.client(), namespace, maxAgeMs: 0 });
    expect((await reader.read()).groups).toEqual({ active: 2, paused: 0, blocked: 1, slowed: 1 });
  });
});
