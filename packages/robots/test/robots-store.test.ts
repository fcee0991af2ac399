import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RobotsStore } from '../src/robots-store.js';

// The fetch lock's release is a Lua compare-and-delete: only the holder's token deletes it.
let server: TestRedis;
let redis: Redis;

beforeAll(async () => {
  server = await startTestRedis();
  redis = server.client();
});
afterAll(() => server.stop());

describe('RobotsStore lock', () => {
  it('is released by its own token only, also after the server lost its script cache', async () => {
    const store = new RobotsStore(redis, 'test-robots');
    const origin = 'https://example.test';
    const token = await store.tryLock(origin, 60_000);
    expect(token).not.toBeNull();
    expect(await store.tryLock(origin, 60_000)).toBeNull();

    await store.unlock(origin, 'someone-else');
    expect(await redis.get(store.lockKey(origin))).toBe(token);
    await redis.script('FLUSH');
    await store.unlock(origin, token!);
    expect(await redis.exists(store.lockKey(origin))).toBe(0);
    expect(await store.tryLock(origin, 60_000)).not.toBeNull();
  });
});
