--[[
  read-status:
  Read-only snapshot of groups on the Redis clock.
  KEYS[1] policy hash
  KEYS[2i], KEYS[2i+1] group i's hash and lease zset (i = 1..)
  ARGV[1] adaptive floor
  ARGV[2] adaptive rise per second
  Reply: {Ok, policy version, now, then per group: pausedUntil, pauseReason, strikes,
          admitted, deferred, lastAdmitAt, minInterval, lateStarts, slippedStarts, started, inFlight,
          pace factor (as if the group adapts), paceReason, paceChangedAt, paceCuts, latency, baseline}
  A pace that has grown back to 1 since its last cut reads as recovered at the
  time it reached 1, though no release has recorded that yet.
  Codes: 1 Ok
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "pacing.lua"
local now = now_ms()
local floor = tonumber(ARGV[1])
local rise = tonumber(ARGV[2])
local out = {1, redis.call('HGET', KEYS[1], 'version') or '0', fmt(now)}
for i = 2, #KEYS, 2 do
  local h = redis.call('HMGET', KEYS[i], 'pausedUntil', 'pauseReason', 'strikes', 'admitted', 'deferred', 'lastAdmitAt', 'minInterval', 'lateStarts', 'slippedStarts', 'started')
  for k = 1, 10 do out[#out + 1] = h[k] end
  out[#out + 1] = redis.call('ZCOUNT', KEYS[i + 1], '(' .. fmt(now), '+inf')
  local p = redis.call('HMGET', KEYS[i], 'pace', 'cutAt', 'paceReason', 'paceChangedAt', 'paceCuts', 'latency', 'baseline')
  local f = pace_factor('1', p[1], p[2], now, floor, rise)
  local reason, changed_at = p[3], p[4]
  if p[1] and f >= 1 then
    reason = 'recovered after ' .. (reason or 'a cut')
    changed_at = fmt(num(p[2], now) + (1 - tonumber(p[1])) / rise * 1000)
  end
  out[#out + 1] = fmt(f)
  out[#out + 1] = reason
  out[#out + 1] = changed_at
  for k = 5, 7 do out[#out + 1] = p[k] end
end
return out
