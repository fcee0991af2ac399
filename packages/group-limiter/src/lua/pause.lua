--[[
  pause:
  Admin pause: sets pausedUntil = now + min(forMs, maxPauseMs), replacing any current pause.
  KEYS[1] policy hash
  KEYS[2] group hash
  KEYS[3] groups set
  ARGV[1] policy version
  ARGV[2] group
  ARGV[3] forMs
  ARGV[4] reason
  ARGV[5] maxPauseMs
  Reply: {Ok, pausedForMs} | {StalePolicy, version}
  Codes: 0 StalePolicy, 1 Ok
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/redis/lua/args.lua"
--- @include "policy-check.lua"
local now = now_ms()
local ms = math.min(math.max(tonumber(ARGV[3]), 0), tonumber(ARGV[5]))
redis.call('HSET', KEYS[2], 'pausedUntil', fmt(now + ms), 'pauseReason', ARGV[4])
redis.call('SADD', KEYS[3], ARGV[2])
return {1, math.ceil(ms)}
