import { createHash } from 'node:crypto';

/** A Lua script with its SHA1, run with EVALSHA and loaded on demand. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/** Wraps Lua source with its SHA1 so it can be run with EVALSHA. */
export function luaScript(name: string, source: string): LuaScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Lua shared by the scripts. Time comes from the Redis server (`TIME`), never from
 * a client, so machines with skewed clocks agree; `replicate_commands` makes `TIME`
 * before writes legal on Redis 5/6 (a no-op on Redis 7, which always replicates effects).
 * Stored times keep microseconds ('%.3f') so pacing does not drift through rounding.
 */
export const LUA_PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function num(value, default)
  local n = tonumber(value)
  if n == nil then return default end
  return n
end
local function fmt(x)
  return string.format('%.3f', x)
end
-- A group's own minimum interval (robots.txt Crawl-delay), capped, only ever
-- slows it down: when it is the longer one it replaces the policy's interval,
-- without burst (starts at least that far apart, as Crawl-delay asks).
-- Denied jobs take distinct wake slots on the group's horizon (wakeAt), spaced by
-- step, so a backlog does not wake all at once and spin. Returns the slot.
local function take_wake_slot(group_key, wake_at, earliest, step)
  local wake = math.max(wake_at, earliest)
  redis.call('HSET', group_key, 'wakeAt', fmt(wake + step))
  redis.call('HINCRBY', group_key, 'deferred', 1)
  return wake
end
local function effective_pacing(interval, tau, min_interval, cap)
  local own = math.min(min_interval, cap)
  if own > interval then return own, 0 end
  return interval, tau
end
`;

/** Lua that answers StalePolicy unless KEYS[1] (policy hash) holds version ARGV[1]. */
export function luaPolicyCheck(staleCode: number): string {
  return `
local stored_version = redis.call('HGET', KEYS[1], 'version') or '0'
if stored_version ~= ARGV[1] then return {${staleCode}, stored_version} end
`;
}
