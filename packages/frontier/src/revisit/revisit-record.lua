--[[
  revisit-record:
  Records a fetch of a URL and schedules its next one, atomically: the state
  is written with a new generation and one wheel entry is added (any older
  entry of the URL becomes stale). A retired URL's state is deleted.
  KEYS[1] counters (R n)
  ARGV[1] R, the revisit key prefix
  ARGV[2] buckets (of the per-URL state)
  ARGV[3] URL
  ARGV[4] now (ds)
  ARGV[5] packed state (RV_FORMAT with generation 0 and the last change's age to
          keep when unchanged, then the validator)
  ARGV[6] changed ('1'/'0')
  ARGV[7] retire ('1'/'0')
  ARGV[8] outcome counter ('' none)
  ARGV[9] bytes saved
  ARGV[10] archived response ('' keeps the one stored)
  ARGV[11] the URL's group ('' counts in no group's figures)
  Reply: {1 when the URL was known before, the generation written (-1 retired)}
]]
--- @include "revisit.lua"
local prefix, buckets, url, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local key, field, bucket = rv_locate(prefix, url, buckets)
local old = redis.call('HGET', key, field)
local archive = prefix .. 'a:' .. bucket
local group = ARGV[11] or ''
-- Adds to a fleet counter and to the group's field of that counter's per-group hash.
local function count(counter, by)
  redis.call('HINCRBY', KEYS[1], counter, by)
  if group ~= '' then redis.call('HINCRBY', prefix .. 'g:' .. counter, group, by) end
end
if ARGV[8] ~= '' then count(ARGV[8], 1) end
local saved = tonumber(ARGV[9])
if saved > 0 then count('bytesSaved', saved) end
-- The first fetch of a URL consumes its hint (a retired one's too).
if not old then redis.call('HDEL', prefix .. 'h:' .. bucket, field) end
if ARGV[7] == '1' then
  redis.call('HDEL', archive, field)
  if old then
    redis.call('HDEL', key, field)
    count('known', -1)
  end
  count('retired', 1)
  if old then return {1, -1} end
  return {0, -1}
end
local s = rv_decode(ARGV[5])
local known = 0
if old then
  known = 1
  local o = rv_decode(old)
  s.gen = (o.gen + 1) % 65536
  -- Unchanged: the last change keeps its time, so its age grows by the time since the last fetch.
  if ARGV[6] ~= '1' then
    local age = rv_f16(o.age) + math.max(0, now - o.fetched)
    local e = 0
    while age >= 2048 do age = age / 2; e = e + 1 end
    s.age = e * 2048 + math.floor(age)
  end
else
  count('known', 1)
end
redis.call('HSET', key, field, rv_encode(s))
if ARGV[10] ~= '' then redis.call('HSET', archive, field, ARGV[10]) end
rv_index(prefix, s.gen, url, rv_due(s), now, {})
return {known, s.gen}
