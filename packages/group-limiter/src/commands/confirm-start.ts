import { CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { PACING_INCLUDE } from './limiter-lua.js';
import { ScriptCode } from './script-code.js';

/**
 * Re-checks a start reserved ahead, when its time has come: a 429 seen by
 * another worker while this one waited must stop it too, and the concurrency
 * cap must still hold now that the earlier reservations have started. A
 * denied start gives its lease back at once; a concurrency denial gets a wake
 * slot on the group's horizon like acquire's.
 * KEYS: 1 group hash, 2 leases zset
 * ARGV: 1 lease id, 2 concurrency (0 = unlimited), 3 leaseMs, 4 minimum deferral step ms,
 *       5 '1' = the group adapts its pace, 6 adaptive floor, 7 adaptive rise per second,
 *       8 near ms (as acquire's ARGV 11: leases starting within it count as started)
 * Reply: {Ok} | {DeniedPaused, pausedForMs} | {DeniedConcurrency, wakeInMs}
 */
export const confirmStartScript = defineLuaScript({
  name: 'confirm-start',
  keys: 2,
  includes: [CLOCK_INCLUDE, PACING_INCLUDE],
  lua: `
local now = now_ms()
local h = redis.call('HMGET', KEYS[1], 'pausedUntil', 'wakeAt', 'holdMs', 'pace', 'cutAt')
local paused_until = num(h[1], 0)
if paused_until > now then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {${ScriptCode.DeniedPaused}, fmt(paused_until - now)}
end
local _, _, conc = paced_limits(0, 0, tonumber(ARGV[2]), pace_factor(ARGV[5], h[4], h[5], now, tonumber(ARGV[6]), tonumber(ARGV[7])))
if conc > 0 then
  local lease_ms = tonumber(ARGV[3])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', fmt(now))
  -- This start counts as started from now on for everyone, even if the
  -- caller's clock woke it early. A start within the near window is counted
  -- already, and keeps its score: it still names its reserved start (a late
  -- start is retaken by it).
  local own = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
  if not own or own > now + lease_ms + tonumber(ARGV[8]) then redis.call('ZADD', KEYS[2], fmt(now + lease_ms), ARGV[1]) end
  -- Counted as acquire counts: started, or starting within the near window.
  local started = redis.call('ZCOUNT', KEYS[2], '-inf', fmt(now + lease_ms + tonumber(ARGV[8])))
  if started > conc then
    redis.call('ZREM', KEYS[2], ARGV[1])
    local step = math.max(tonumber(ARGV[4]), num(h[3], 0) / conc)
    local wake = take_wake_slot(KEYS[1], num(h[2], 0), now + step, step)
    return {${ScriptCode.DeniedConcurrency}, math.ceil(wake - now)}
  end
end
return {${ScriptCode.Ok}}
`,
});
