import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { connectRedis, openRedisFrom, type RedisConnectionInput } from '../src/index.js';

let server: TestRedis;

beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => {
  await server.stop();
});

describe('openRedisFrom (a client beside BullMQ, from the same connection)', () => {
  it('opens from options with a url, dropping the BullMQ-only skipVersionCheck', async () => {
    const redis = openRedisFrom({ url: server.url, skipVersionCheck: true, maxRetriesPerRequest: 1 });
    try {
      expect(await redis.ping()).toBe('PONG');
      expect((redis as Redis).options.maxRetriesPerRequest).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it('opens from host and port', async () => {
    const redis = openRedisFrom({ host: '127.0.0.1', port: server.port });
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it("duplicates an ioredis instance: closing ours leaves the caller's open", async () => {
    const theirs = server.client();
    const ours = openRedisFrom(theirs);
    expect(ours).not.toBe(theirs);
    await ours.quit();
    expect(await theirs.ping()).toBe('PONG');
  });

  it('refuses a client it cannot duplicate as ioredis', () => {
    const foreign: RedisConnectionInput = { duplicate: () => ({}) };
    expect(() => openRedisFrom(foreign)).toThrow(TypeError);
  });
});

describe('connectRedis with autoPipelining (a client that concurrent tasks share)', () => {
  it('holds the commands of one turn for one write, and answers each in order', async () => {
    const shared = (await connectRedis(server.url, { role: 'worker', autoPipelining: true })) as Redis;
    const plain = (await connectRedis(server.url, { role: 'worker' })) as Redis;
    try {
      const key = `autopipeline-${process.pid}`;
      const replies = Array.from({ length: 50 }, () => shared.incr(key));
      // Queued, not yet written: the turn has not ended.
      expect(shared.autoPipelineQueueSize).toBe(50);
      expect(await Promise.all(replies)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      const unpiped = plain.incr(key);
      expect(plain.autoPipelineQueueSize).toBe(0);
      expect(await unpiped).toBe(51);
      await shared.del(key);
    } finally {
      shared.disconnect();
      plain.disconnect();
    }
  });
});
