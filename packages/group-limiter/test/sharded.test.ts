import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, createShardedGroupLimiter, type GroupLimiter } from '../src/index.js';
import { testPrefix } from './support.js';

// one limiter over a crawl's shards: a group's state lives in its shard's keys only.
let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

describe('a sharded group limiter', () => {
  it("routes every call about a group to its shard, writes the policy to every shard, and lists all shards' groups", async () => {
    const redis = server.client();
    const shards: GroupLimiter[] = [createGroupLimiter({ redis, prefix: testPrefix() }), createGroupLimiter({ redis, prefix: testPrefix() })];
    // a.test and c.test in shard 0, b.test in shard 1.
    const shardOf = (group: string) => (group === 'b.test' ? 1 : 0);
    const limiter = createShardedGroupLimiter(shards, shardOf);
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 1 } });
    for (const shard of shards) expect((await shard.getPolicy())?.defaults.concurrency).toBe(1);

    const a = await limiter.acquire({ group: 'a.test', leaseId: 'a1' });
    const b = await limiter.acquire({ group: 'b.test', leaseId: 'b1' });
    expect(a.admitted && b.admitted).toBe(true);
    // The cap of 1 holds per group through the router: a second a.test start waits.
    expect((await limiter.acquire({ group: 'a.test', leaseId: 'a2' })).admitted).toBe(false);
    await limiter.pause('c.test', 10_000, 'maintenance');

    expect((await shards[0]!.list()).map((status) => status.group)).toEqual(['a.test', 'c.test']);
    expect((await shards[1]!.list()).map((status) => status.group)).toEqual(['b.test']);
    const all = await limiter.list();
    expect(all.map((status) => status.group)).toEqual(['a.test', 'b.test', 'c.test']);
    expect(all.map((status) => status.inFlight)).toEqual([1, 1, 0]);
    expect((await limiter.status('c.test')).pauseReason).toBe('maintenance');

    if (b.admitted) await limiter.release(b.lease, { status: 200 });
    expect((await shards[1]!.status('b.test')).inFlight).toBe(0);
    expect((await shards[0]!.status('a.test')).inFlight).toBe(1);
  });

  it('refuses runPaced over groups of two shards (a script runs in one slot)', () => {
    const redis = server.client();
    const shards = [createGroupLimiter({ redis, prefix: testPrefix() }), createGroupLimiter({ redis, prefix: testPrefix() })];
    const limiter = createShardedGroupLimiter(shards, (group) => (group === 'b' ? 1 : 0));
    expect(() => limiter.runPaced(undefined as never, ['a', 'b'], { operation: 'test', keys: [], args: [] })).toThrow(RangeError);
  });
});
