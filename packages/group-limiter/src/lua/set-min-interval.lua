--[[
  set-min-interval:
  Stores a group's own minimum interval between starts (0 clears it). The cap is
  applied where it is used (acquire, runPaced, status), so a later policy change
  takes effect. The next start is pushed to at least the last start plus the
  (capped) interval, so the first start after a Crawl-delay arrives obeys it too.
  KEYS[1] policy hash
  KEYS[2] group hash
  KEYS[3] groups set
  ARGV[1] policy version
  ARGV[2] group
  ARGV[3] minimum interval ms
  ARGV[4] maxMinIntervalMs
  Reply: {Ok} | {StalePolicy, version}
  Codes: 0 StalePolicy, 1 Ok
]]
--- @include "@crawlq/redis/lua/args.lua"
--- @include "policy-check.lua"
local ms = tonumber(ARGV[3])
redis.call('SADD', KEYS[3], ARGV[2])
if ms <= 0 then
  redis.call('HDEL', KEYS[2], 'minInterval')
  return {1}
end
redis.call('HSET', KEYS[2], 'minInterval', fmt(ms))
local own = math.min(ms, tonumber(ARGV[4]))
local h = redis.call('HMGET', KEYS[2], 'tat', 'lastAdmitAt')
local last = tonumber(h[2])
if last and own > 0 and last + own > num(h[1], 0) then
  redis.call('HSET', KEYS[2], 'tat', fmt(last + own))
end
return {1}
