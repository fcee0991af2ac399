import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARGS_INCLUDE, CLOCK_INCLUDE, connectRedis, defineLuaScript, luaInclude, type LuaReply , type RedisClient } from '../src/index.js';

// one runner for every Lua script, against a real redis-server: includes,
// EVALSHA with the EVAL fallback when the server's script cache is empty,
// typed replies, and Lua errors as rejections.
let server: TestRedis;
let redis: RedisClient;

beforeAll(async () => {
  server = await startTestRedis();
  redis = await connectRedis(server.url, { role: 'coordinator' });
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

/** Calls of one command so far, from the server's own statistics. */
async function calls(command: 'eval' | 'evalsha'): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

function asTuple(reply: LuaReply): [string, number, number] {
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
  const [now, given, fallback] = reply;
  if (typeof now !== 'string' || typeof given !== 'number' || typeof fallback !== 'number') throw new Error('unexpected reply types');
  return [now, given, fallback];
}

/** Server time (string: a Lua number in a reply loses its fraction), ARGV[1] as a number, a missing ARGV[2] defaulted. */
const clockScript = defineLuaScript({
  name: 'test-clock',
  keys: 1,
  includes: [CLOCK_INCLUDE, ARGS_INCLUDE],
  lua: `
redis.call('SET', KEYS[1], fmt(now_ms()))
return {redis.call('GET', KEYS[1]), num(ARGV[1], -1), num(ARGV[2], 7)}
`,
  decode: asTuple,
});

describe('LuaScript', () => {
  it('runs a script with its includes: the server clock, written after TIME, and the argument helpers', async () => {
    const before = await redisNowMs();
    const [now, given, fallback] = await clockScript.run(redis, ['lua:clock'], [42]);
    const after = await redisNowMs();
    expect(now).toMatch(/^\d+\.\d{3}$/);
    expect(Number(now)).toBeGreaterThanOrEqual(Math.floor(before));
    expect(Number(now)).toBeLessThanOrEqual(after + 1);
    expect([given, fallback]).toEqual([42, 7]);
  });

  it('places each include once, required ones first, and refuses two different includes of one name', () => {
    const pacing = luaInclude('pacing', `local function twice(x) return fmt(x * 2) end\n`, [ARGS_INCLUDE]);
    const script = defineLuaScript({ name: 'test-order', keys: 0, includes: [pacing, ARGS_INCLUDE, CLOCK_INCLUDE], lua: 'return 1' });
    const headers = script.source.split('\n').filter((line) => line.startsWith('-- '));
    expect(headers).toEqual(['-- include: args', '-- include: pacing', '-- include: clock', '-- script: test-order']);
    const impostor = luaInclude('args', 'local function num(x) return x end');
    expect(() => defineLuaScript({ name: 'test-clash', keys: 0, includes: [ARGS_INCLUDE, impostor], lua: 'return 1' })).toThrow(/two different includes named args/);
  });

  it('runs by SHA once the server has the script, and falls back to EVAL after SCRIPT FLUSH', async () => {
    const counter = defineLuaScript<number>({ name: 'test-counter', keys: 1, lua: `return redis.call('INCR', KEYS[1])` });
    expect(await counter.run(redis, ['lua:counter'])).toBe(1);
    expect(await redis.script('EXISTS', counter.sha)).toEqual([1]);
    const [evalsBefore, shasBefore] = [await calls('eval'), await calls('evalsha')];
    expect(await counter.run(redis, ['lua:counter'])).toBe(2);
    expect(await calls('eval')).toBe(evalsBefore);
    expect(await calls('evalsha')).toBe(shasBefore + 1);

    await redis.script('FLUSH');
    expect(await counter.run(redis, ['lua:counter'])).toBe(3);
    expect(await calls('eval')).toBe(evalsBefore + 1);
    // The EVAL cached it again: the next run is EVALSHA alone.
    expect(await redis.script('EXISTS', counter.sha)).toEqual([1]);
    expect(await counter.run(redis, ['lua:counter'])).toBe(4);
    expect(await calls('eval')).toBe(evalsBefore + 1);
  });

  it('keeps working across a Redis restart, which empties the script cache', async () => {
    const own = await startTestRedis();
    const client = await connectRedis(own.url, { role: 'coordinator' });
    try {
      const [now, given] = await clockScript.run(client, ['lua:restart'], ['5']);
      await own.halt();
      await own.start();
      const [later, again] = await clockScript.run(client, ['lua:restart'], ['6']);
      expect([given, again]).toEqual([5, 6]);
      expect(Number(later)).toBeGreaterThanOrEqual(Number(now));
    } finally {
      client.disconnect();
      await own.stop();
    }
  });

  it('passes Buffer arguments as raw bytes and replies typed by the caller', async () => {
    const lengths = defineLuaScript<[number, string]>({ name: 'test-bytes', keys: 0, lua: `return {string.len(ARGV[1]), ARGV[2]}` });
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80]);
    const [length, text]: [number, string] = await lengths.run(redis, [], [bytes, 'ok']);
    expect([length, text]).toEqual([4, 'ok']);
  });

  it('rejects with the decoder error when the reply has another shape', async () => {
    const wrong = defineLuaScript({ name: 'test-shape', keys: 0, lua: `return {'a'}`, decode: asTuple });
    await expect(wrong.run(redis, [])).rejects.toThrow(/unexpected reply \["a"\]/);
  });

  it('surfaces Lua errors as rejections, whether the script ran by SHA or by EVAL', async () => {
    const failing = defineLuaScript({ name: 'test-error', keys: 0, includes: [ARGS_INCLUDE], lua: `error('boom ' .. fmt(1))` });
    await redis.script('FLUSH');
    await expect(failing.run(redis, [])).rejects.toThrow(/boom 1\.000/);
    // Redis caches a script whose body fails at run time: this one ran by SHA.
    await expect(failing.run(redis, [])).rejects.toMatchObject({ name: 'ReplyError', message: expect.stringMatching(/boom/) });

    const refused = defineLuaScript({ name: 'test-error-reply', keys: 0, lua: `return redis.error_reply('REFUSED by script')` });
    await expect(refused.run(redis, [])).rejects.toThrow(/REFUSED by script/);
    const nested = defineLuaScript({ name: 'test-nested-error', keys: 0, lua: `return {1, redis.error_reply('NESTED failure')}` });
    await expect(nested.run(redis, [])).rejects.toThrow(/NESTED failure/);
    const badSyntax = defineLuaScript({ name: 'test-syntax', keys: 0, lua: `return (` });
    await expect(badSyntax.run(redis, [])).rejects.toThrow(/ERR/);
  });

  it('refuses a call with the wrong number of keys before it reaches Redis', async () => {
    const shas = await calls('evalsha');
    await expect(clockScript.run(redis, [], [1])).rejects.toThrow(RangeError);
    expect(await calls('evalsha')).toBe(shas);
    const variadic = defineLuaScript<number>({ name: 'test-variadic', keys: 'variadic', lua: 'return #KEYS' });
    expect(await variadic.run(redis, ['a', 'b', 'c'])).toBe(3);
  });
});
