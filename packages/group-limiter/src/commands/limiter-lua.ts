import { ARGS_INCLUDE, luaInclude } from '@crawlq/redis';

/**
 * `take_wake_slot` and `effective_pacing`, shared by the limiter's scripts.
 * Times come from the `clock` include and are stored with `fmt` (µs precision,
 * so pacing does not drift through rounding).
 */
export const PACING_INCLUDE = luaInclude(
  'pacing',
  `
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
`,
  [ARGS_INCLUDE],
);

/** Lua that answers StalePolicy unless KEYS[1] (policy hash) holds version ARGV[1]. */
export function luaPolicyCheck(staleCode: number): string {
  return `
local stored_version = redis.call('HGET', KEYS[1], 'version') or '0'
if stored_version ~= ARGV[1] then return {${staleCode}, stored_version} end
`;
}
