--[[
  take-digest:
  Moves the pending events into the digest job's own keys (RENAME), once.
  Re-running it for the same job (a retry, or a re-run after a crash before
  the job stored the digest in its data) returns the same events again, so
  nothing is lost and nothing is counted twice.

  KEYS[1] pending hash
  KEYS[2] pending examples
  KEYS[3] state hash
  KEYS[4] taken hash
  KEYS[5] taken examples
  KEYS[6] flush flag
  ARGV[1] the job's digest number (seq)
  ARGV[2] window (ms)
  Reply:
    { 'taken', hash fields flat, examples }
    { 'early', notBefore }   another digest went out less than a window ago (whole ms)
    { 'stale' }              the job's events were already taken by its digest
    { 'empty' }              nothing pending
]]
--- @include "@crawlq/redis/lua/clock.lua"
if redis.call('EXISTS', KEYS[4]) == 1 then
  return { 'taken', redis.call('HGETALL', KEYS[4]), redis.call('LRANGE', KEYS[5], 0, -1) }
end
local seq = tonumber(redis.call('HGET', KEYS[3], 'seq') or '1')
local jobSeq = tonumber(ARGV[1])
if jobSeq < seq then return { 'stale' } end
local now = math.floor(now_ms())
local lastDigestAt = tonumber(redis.call('HGET', KEYS[3], 'lastDigestAt') or '0')
local notBefore = lastDigestAt + tonumber(ARGV[2])
if redis.call('EXISTS', KEYS[6]) == 0 and lastDigestAt > 0 and now < notBefore then
  return { 'early', string.format('%.0f', notBefore) }
end
-- This job's number is used up either way: later events belong to the next digest.
redis.call('HSET', KEYS[3], 'seq', string.format('%.0f', jobSeq + 1))
if redis.call('EXISTS', KEYS[1]) == 0 then return { 'empty' } end
redis.call('RENAME', KEYS[1], KEYS[4])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[5]) end
redis.call('HSET', KEYS[3], 'lastDigestAt', string.format('%.0f', now))
redis.call('HSET', KEYS[4], 'takenAt', string.format('%.0f', now))
return { 'taken', redis.call('HGETALL', KEYS[4]), redis.call('LRANGE', KEYS[5], 0, -1) }
