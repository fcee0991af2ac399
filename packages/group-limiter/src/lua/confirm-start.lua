--[[
  confirm-start:
  Re-checks a start reserved ahead, when its time has come: a 429 seen by
  another worker while this one waited must stop it too, and the concurrency
  cap must still hold now that the earlier reservations have started. A
  denied start gives its lease back at once; a concurrency denial gets a wake
  slot on the group's horizon like acquire's.
  A start that also holds a slot of its server's concurrency cap (ARGV 9 > 0)
  is checked there the same way: acquire counted the reservations starting
  near, not this far one, so the cap must still hold now that it comes.
  KEYS[1] group hash
  KEYS[2] leases zset
  KEYS[3] server hash
  KEYS[4] server lease zset (both KEYS[1] again when there is no server cap)
  ARGV[1] lease id
  ARGV[2] concurrency (0 = unlimited)
  ARGV[3] leaseMs
  ARGV[4] minimum deferral step ms
  ARGV[5] '1' = the group adapts its pace
  ARGV[6] adaptive floor
  ARGV[7] adaptive rise per second
  ARGV[8] near ms (as acquire's ARGV 11: leases starting within it count as started)
  ARGV[9] the server's concurrency cap (this shard's share; 0 = none)
  Reply: {Ok} | {DeniedPaused, pausedForMs} | {DeniedConcurrency | DeniedServerConcurrency, wakeInMs}
  Codes: 1 Ok, 3 DeniedConcurrency, 4 DeniedPaused, 8 DeniedServerConcurrency
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "pacing.lua"
local now = now_ms()
local h = redis.call('HMGET', KEYS[1], 'pausedUntil', 'wakeAt', 'holdMs', 'pace', 'cutAt')
local paused_until = num(h[1], 0)
local server_conc = tonumber(ARGV[9] or '0')
local function give_back()
  redis.call('ZREM', KEYS[2], ARGV[1])
  if server_conc > 0 then redis.call('ZREM', KEYS[4], ARGV[1]) end
end
if paused_until > now then
  give_back()
  return {4, fmt(paused_until - now)}
end
local _, _, conc = paced_limits(0, 0, tonumber(ARGV[2]), pace_factor(ARGV[5], h[4], h[5], now, tonumber(ARGV[6]), tonumber(ARGV[7])))
if conc > 0 then
  local lease_ms = tonumber(ARGV[3])
  -- This start counts as started from now on for everyone, even if the
  -- caller's clock woke it early. A start within the near window is counted
  -- already, and keeps its score: it still names its reserved start (a late
  -- start is retaken by it). Its own lease expired meanwhile (a process
  -- stalled longer than a lease) is taken anew, as one never held.
  local own = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
  if not own or own <= now or own > now + lease_ms + tonumber(ARGV[8]) then redis.call('ZADD', KEYS[2], fmt(now + lease_ms), ARGV[1]) end
  -- Counted as acquire counts: started, or starting within the near window;
  -- expired leases (a crashed worker's) left out by their score, not removed
  -- here (acquire drops them every 32nd admission: a command less per confirm).
  local started = redis.call('ZCOUNT', KEYS[2], '(' .. fmt(now), fmt(now + lease_ms + tonumber(ARGV[8])))
  if started > conc then
    give_back()
    local step = math.max(tonumber(ARGV[4]), num(h[3], 0) / conc)
    local wake = take_wake_slot(KEYS[1], num(h[2], 0), now + step, step)
    return {3, math.ceil(wake - now)}
  end
end
-- The server's cap, counted as acquire's server level counts it.
if server_conc > 0 then
  local lease_ms = tonumber(ARGV[3])
  local own = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[1]))
  if own and own > now + lease_ms then redis.call('ZADD', KEYS[4], fmt(now + lease_ms), ARGV[1]) end
  local started = redis.call('ZCOUNT', KEYS[4], '(' .. fmt(now), fmt(now + lease_ms + tonumber(ARGV[8])))
  if own and started > server_conc then
    give_back()
    local step = tonumber(ARGV[4])
    local wake = take_wake_slot(KEYS[3], num(redis.call('HGET', KEYS[3], 'wakeAt'), 0), now + step, step)
    return {8, math.ceil(wake - now)}
  end
end
return {1}
