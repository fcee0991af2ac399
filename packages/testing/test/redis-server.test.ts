import { afterAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../src/index.js';

describe('startTestRedis', () => {
  let redis: TestRedis | undefined;
  afterAll(async () => redis?.stop());

  it('starts a private server on a port other than 6379 and stops it', async () => {
    redis = await startTestRedis();
    expect(redis.port).not.toBe(6379);
    const client = redis.client();
    await client.set('k', 'v');
    expect(await client.get('k')).toBe('v');
    await redis.stop();
    await expect(client.ping()).rejects.toThrow();
  });
});
