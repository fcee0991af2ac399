import { createHash } from 'node:crypto';
import type { RedisClient } from './cluster.js';
import { composeLuaFile, luaFiles, type LuaFile, type LuaFiles } from './lua-files.js';

/**
 * What a Lua reply becomes through ioredis: integers (Lua numbers are
 * truncated, so scripts return fractions as strings), bulk and status strings,
 * null for nil/false, arrays for tables. Error replies reject instead.
 */
export type LuaReply = string | number | null | LuaReply[];

/** One KEYS or ARGV value; numbers are sent as `String(n)`, Buffers as raw bytes. */
export type LuaArg = string | number | Buffer;

/** A named piece of Lua shared by scripts: helper functions and constants placed before a script's body. */
export interface LuaInclude {
  readonly name: string;
  readonly lua: string;
  /** Includes this one calls; they are placed before it. */
  readonly requires: readonly LuaInclude[];
}

/** Names a piece of shared Lua (see {@link LuaInclude}). */
export function luaInclude(name: string, lua: string, requires: readonly LuaInclude[] = []): LuaInclude {
  return { name, lua, requires };
}

/**
 * This package's Lua, for the others' include lines (`@crawlq/redis/lua/clock.lua`):
 * - `lua/clock.lua`: `now_ms()`, the Redis server's clock in ms (with µs fractions);
 * - `lua/args.lua`: `num(value, default)` and `fmt(x)` (a number as a µs-precise string).
 */
export const REDIS_LUA: LuaFiles = luaFiles({ package: '@crawlq/redis', root: new URL('.', import.meta.url) });

/** `now_ms()` (lua/clock.lua), for scripts still written in TypeScript strings (tests). */
export const CLOCK_INCLUDE = luaInclude('clock', REDIS_LUA.file('lua/clock.lua').text);

/** `num(value, default)` and `fmt(x)` (lua/args.lua), for scripts still written in TypeScript strings (tests). */
export const ARGS_INCLUDE = luaInclude('args', REDIS_LUA.file('lua/args.lua').text);

/**
 * How to build a {@link LuaScript}: from a `.lua` file (what the packages do),
 * or from a string with includes placed before it (short scripts of tests).
 */
export type LuaScriptSpec = LuaScriptBase & ({ readonly file: LuaFile } | { readonly lua: string; readonly includes?: readonly LuaInclude[] });

interface LuaScriptBase {
  /** For error messages and debugging. */
  readonly name: string;
  /** How many leading arguments are keys, checked on every run; 'variadic' when each call decides. */
  readonly keys: number | 'variadic';
}

/** Every script defined so far in this process, in definition order. */
const DEFINED: LuaScript<unknown>[] = [];

/**
 * A Lua script defined once and run by SHA1 (EVALSHA), so the source crosses
 * the wire only when the server lacks it: on first use, or after a restart or
 * `SCRIPT FLUSH` emptied its script cache (NOSCRIPT), when EVAL runs and caches it.
 */
export class LuaScript<Reply = LuaReply> {
  readonly name: string;
  /** The full source: includes, then the body. */
  readonly source: string;
  readonly sha: string;
  /** The `.lua` file it was made from (undefined for a script in a string). */
  readonly file: LuaFile | undefined;
  readonly #keys: number | 'variadic';
  readonly #decode: (reply: LuaReply) => Reply;

  constructor(spec: LuaScriptSpec, decode: (reply: LuaReply) => Reply) {
    this.name = spec.name;
    this.#keys = spec.keys;
    this.#decode = decode;
    this.file = 'file' in spec ? spec.file : undefined;
    this.source = composeSource(spec);
    this.sha = createHash('sha1').update(this.source).digest('hex');
    DEFINED.push(this);
  }

  /** Runs the script atomically; rejects with Redis' ReplyError when the script fails or returns an error. */
  async run(redis: RedisClient, keys: readonly string[], args: readonly LuaArg[] = []): Promise<Reply> {
    if (this.#keys !== 'variadic' && keys.length !== this.#keys) {
      throw new RangeError(`Lua script ${this.name} takes ${this.#keys} keys, got ${keys.length}`);
    }
    let reply: unknown;
    try {
      reply = await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      reply = await redis.eval(this.source, keys.length, ...keys, ...args);
    }
    throwNestedError(reply);
    return this.#decode(reply as LuaReply);
  }
}

/**
 * The scripts the modules loaded so far have defined (a module defines its
 * scripts when it loads): what a Lua linter reads, each as Redis runs it,
 * includes first.
 */
export function definedLuaScripts(): readonly DefinedLuaScript[] {
  return DEFINED.map(({ name, source, file }) => ({ name, source, file }));
}

/** A script as {@link definedLuaScripts} lists it. */
export interface DefinedLuaScript {
  readonly name: string;
  /** What Redis runs: includes placed, as one text. */
  readonly source: string;
  /** The `.lua` file it was made from (undefined for a script in a string). */
  readonly file: LuaFile | undefined;
}

/**
 * Defines a script. With `decode`, replies are checked and typed by it; without,
 * the reply is typed as `Reply` unchecked (the caller vouches for the script's shape).
 */
export function defineLuaScript<Reply>(spec: LuaScriptSpec & { readonly decode: (reply: LuaReply) => Reply }): LuaScript<Reply>;
export function defineLuaScript<Reply extends LuaReply = LuaReply>(spec: LuaScriptSpec): LuaScript<Reply>;
export function defineLuaScript(spec: LuaScriptSpec & { readonly decode?: (reply: LuaReply) => unknown }): LuaScript<unknown> {
  return new LuaScript(spec, spec.decode ?? ((reply) => reply));
}

function composeSource(spec: LuaScriptSpec): string {
  if ('file' in spec) return composeLuaFile(spec.file);
  const ordered: LuaInclude[] = [];
  const byName = new Map<string, LuaInclude>();
  const visit = (include: LuaInclude): void => {
    const known = byName.get(include.name);
    if (known === include) return;
    // Two includes of one name would define the same Lua locals twice: the later would silently win.
    if (known !== undefined) throw new Error(`Lua script ${spec.name}: two different includes named ${include.name}`);
    for (const required of include.requires) visit(required);
    byName.set(include.name, include);
    ordered.push(include);
  };
  for (const include of spec.includes ?? []) visit(include);
  // The comment lines name each part: Lua errors report a line of this whole source.
  const parts = ordered.map((include) => `-- include: ${include.name}\n${include.lua}`);
  return [...parts, `-- script: ${spec.name}\n${spec.lua}`].join('\n');
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** ioredis resolves an error reply nested in a table as an Error element; it is a failure all the same. */
function throwNestedError(reply: unknown): void {
  if (reply instanceof Error) throw reply;
  if (Array.isArray(reply)) for (const element of reply as unknown[]) throwNestedError(element);
}
