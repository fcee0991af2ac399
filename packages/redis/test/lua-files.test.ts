import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, defineLuaScript, luaFiles, REDIS_LUA, type RedisClient } from '../src/index.js';

// `.lua` files and their `--- @include` lines: resolved within the package
// and in the packages it names, each file placed once, where its line is.

/** A package of files made in memory (the same resolution as files on disk). */
function fakePackage(name: string, made: Record<string, string>, uses = [REDIS_LUA]) {
  return luaFiles({ package: name, root: new URL('file:///nonexistent/src/'), uses, made });
}

describe('luaFiles', () => {
  it("reads this package's own files from its src folder", () => {
    const clock = REDIS_LUA.file('lua/clock.lua');
    expect(clock.id).toBe('@crawlq/redis/lua/clock.lua');
    expect(clock.text).toContain('local function now_ms()');
    expect(REDIS_LUA.file('lua/./clock.lua')).toBe(clock);
  });

  it('places each include where its line is, its own includes first, each file once', () => {
    const lua = fakePackage('@test/a', {
      'lua/shared.lua': '--- @include "@crawlq/redis/lua/args.lua"\nlocal function twice(x) return num(x, 0) * 2 end',
      'lua/other.lua': '--- @include "shared.lua"\nlocal function thrice(x) return num(x, 0) * 3 end',
      'lua/script.lua': '-- head\n--- @include "shared.lua"\n--- @include "other.lua"\n--- @include "../lua/shared.lua"\nreturn twice(ARGV[1]) + thrice(ARGV[1])',
    });
    const script = defineLuaScript({ name: 'test-files', keys: 0, file: lua.file('lua/script.lua') });
    const source = script.source;
    expect(source.match(/local function num/g)).toHaveLength(1);
    expect(source.match(/local function twice/g)).toHaveLength(1);
    // Where the lines were: the head first, args before shared before other, the body last.
    const order = ['-- head', 'local function num', 'local function twice', 'local function thrice', 'return twice'].map((part) => source.indexOf(part));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('refuses an include of a package not declared as used, and a path out of the package', () => {
    const lua = fakePackage('@test/b', { 'lua/x.lua': '--- @include "@test/other/lua/y.lua"\nreturn 1', 'lua/up.lua': '--- @include "../../y.lua"\nreturn 1' }, []);
    expect(() => lua.file('lua/x.lua')).toThrow(/@test\/other is not among the packages/);
    expect(() => lua.file('lua/up.lua')).toThrow(/leaves its package/);
    expect(() => lua.file('lua/missing.lua')).toThrow(/cannot be read/);
  });
});

describe('a script from a file', () => {
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

  it('runs in Redis with its includes', async () => {
    const lua = fakePackage('@test/c', { 'lua/now.lua': '--- @include "@crawlq/redis/lua/clock.lua"\n--- @include "@crawlq/redis/lua/args.lua"\nreturn fmt(now_ms())' });
    const script = defineLuaScript({ name: 'test-file-now', keys: 0, file: lua.file('lua/now.lua') });
    const [seconds] = await redis.time();
    expect(Number(await script.run(redis, []))).toBeGreaterThanOrEqual(Number(seconds) * 1000);
  });
});
