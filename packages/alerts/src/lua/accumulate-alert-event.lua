--[[
  accumulate-alert-event:
  Adds one dead-letter event to the pending digest, atomically, and returns
  what the caller needs to schedule the digest job.

  KEYS[1] pending hash
  KEYS[2] pending examples list
  KEYS[3] state hash
  ARGV[1] group
  ARGV[2] reason
  ARGV[3] example JSON
  ARGV[4] max examples
  ARGV[5] event time (ms)
  Reply: { seq, lastDigestAt, now } as strings; now in whole ms.
]]
--- @include "@crawlq/redis/lua/clock.lua"
local now = math.floor(now_ms())
local at = tonumber(ARGV[5])
redis.call('HINCRBY', KEYS[1], 'total', 1)
redis.call('HINCRBY', KEYS[1], 'g:' .. ARGV[1], 1)
redis.call('HINCRBY', KEYS[1], 'r:' .. ARGV[2], 1)
local first = tonumber(redis.call('HGET', KEYS[1], 'firstAt') or '')
if first == nil or at < first then redis.call('HSET', KEYS[1], 'firstAt', string.format('%.0f', at)) end
local last = tonumber(redis.call('HGET', KEYS[1], 'lastAt') or '')
if last == nil or at > last then redis.call('HSET', KEYS[1], 'lastAt', string.format('%.0f', at)) end
if redis.call('LLEN', KEYS[2]) < tonumber(ARGV[4]) then redis.call('RPUSH', KEYS[2], ARGV[3]) end
local seq = redis.call('HGET', KEYS[3], 'seq') or '1'
local lastDigestAt = redis.call('HGET', KEYS[3], 'lastDigestAt') or '0'
return { seq, lastDigestAt, string.format('%.0f', now) }
