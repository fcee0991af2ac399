import { createHash } from 'node:crypto';
import type { RedisClient } from './cluster.js';

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
 * `now_ms()`: the Redis server's clock in ms (with µs fractions). Time comes
 * from the server (`TIME`), never from a client, so machines with skewed clocks
 * agree. `replicate_commands` makes `TIME` before writes legal on Redis 5/6 (a
 * no-op on Redis 7, which always replicates effects); includes come before a
 * script's body, so it runs before any write.
 */
export const CLOCK_INCLUDE = luaInclude(
  'clock',
  `
if redis.replicate_commands then redis.replicate_commands() end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
`,
);

/**
 * `num(value, default)`: a number from an ARGV or field that may be missing.
 * `fmt(x)`: a number as a string with µs precision ('%.3f'), for storing and
 * returning fractional times (a Lua number in a reply loses its fraction, and
 * stored times rounded to ms would make pacing drift).
 */
export const ARGS_INCLUDE = luaInclude(
  'args',
  `
local function num(value, default)
  local n = tonumber(value)
  if n == nil then return default end
  return n
end
local function fmt(x)
  return string.format('%.3f', x)
end
`,
);

/** How to build a {@link LuaScript}. */
export interface LuaScriptSpec {
  /** For error messages and debugging. */
  readonly name: string;
  /** How many leading arguments are keys, checked on every run; 'variadic' when each call decides. */
  readonly keys: number | 'variadic';
  /** Shared Lua placed before the body, with what they require, each once. */
  readonly includes?: readonly LuaInclude[];
  readonly lua: string;
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
  readonly #keys: number | 'variadic';
  readonly #decode: (reply: LuaReply) => Reply;

  constructor(spec: LuaScriptSpec, decode: (reply: LuaReply) => Reply) {
    this.name = spec.name;
    this.#keys = spec.keys;
    this.#decode = decode;
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
export function definedLuaScripts(): readonly { readonly name: string; readonly source: string }[] {
  return DEFINED.map(({ name, source }) => ({ name, source }));
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
