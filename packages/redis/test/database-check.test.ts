import { ConfigError } from '@crawlq/config';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDatabase, connectRedis, databaseIndexOf, RedisDatabaseError, resolveRedis } from '../src/index.js';

// ioredis only emits an event when the server refuses a URL's database
// and then runs every command in database 0. Refused up front instead.
const PASSWORD = 'S3cr3t';
let redis: TestRedis;
let admin: Redis;
let base: string;
let databases: number;
beforeAll(async () => {
  redis = await startTestRedis();
  admin = redis.client();
  databases = Number(((await admin.config('GET', 'databases')) as string[])[1]);
  await admin.config('SET', 'requirepass', PASSWORD); // the error must not show it
  base = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
});
afterAll(() => redis.stop());

describe('databaseIndexOf', () => {
  it('reads the path, else ?db=, else 0, as ioredis does', () => {
    expect(databaseIndexOf('redis://h:1')).toBe(0);
    expect(databaseIndexOf('redis://h:1/')).toBe(0);
    expect(databaseIndexOf('redis://h:1/7')).toBe(7);
    expect(databaseIndexOf('rediss://:pw@h:1/12?tls=1')).toBe(12);
    expect(databaseIndexOf('redis://h:1?db=3')).toBe(3);
  });
});

describe('a database the server lacks', () => {
  it('connectRedis rejects with a one-line RedisDatabaseError, an input error, without the password', async () => {
    const missing = databases + 83;
    const error = await connectRedis(`${base}/${missing}`, { role: 'worker' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedisDatabaseError);
    expect(error).toBeInstanceOf(ConfigError); // exit 2 wherever ConfigError is
    expect((error as Error).message).toBe(`Redis at redis://127.0.0.1:${redis.port} has no database ${missing} (it has ${databases}; databases setting)`);
    expect(error).toMatchObject({ database: missing, databases });
  });

  it('resolveRedis refuses it before anyone uses the URL; database 0 and existing ones pass', async () => {
    await expect(resolveRedis({ url: `${base}/${databases}`, stateDir: '.' })).rejects.toThrow(RedisDatabaseError);
    await expect(resolveRedis({ url: `${base}/${databases - 1}`, stateDir: '.' })).resolves.toMatchObject({ embedded: false });
    await expect(checkDatabase(base)).resolves.toBeUndefined();
    const client = await connectRedis(`${base}/1`, { role: 'producer' });
    await client.set('database-check', 'one');
    expect(await admin.get('database-check')).toBeNull(); // database 0: it really wrote to 1
    client.disconnect();
  });

  it('leaves a server it cannot reach to the caller', async () => {
    await expect(checkDatabase('redis://127.0.0.1:1/5')).resolves.toBeUndefined();
  });
});
