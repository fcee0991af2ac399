--[[
  revisit-audit:
  Checks the schedule's invariant, each known URL has exactly one live wheel
  entry (a finite due time, never two). Reads every list and bucket: for tests
  and small crawls only.
  Reply: {live entries, stale entries, known URLs with no live entry, URLs with two or more}
  KEYS[1] wheel slots (R slots)
  ARGV[1] R, the revisit key prefix
  ARGV[2] buckets (of the per-URL state)
]]
--- @include "revisit.lua"
local prefix, buckets = ARGV[1], tonumber(ARGV[2])
local live, stale = {}, 0
local live_count = 0
for _, slot in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  for _, entry in ipairs(redis.call('LRANGE', prefix .. 'w:' .. slot, 0, -1)) do
    local gen = struct.unpack('>H', entry)
    local key, field, bucket = rv_locate(prefix, string.sub(entry, 3), buckets)
    local value = redis.call('HGET', key, field)
    if value and rv_decode(value).gen == gen then
      local id = bucket .. ':' .. field
      live[id] = (live[id] or 0) + 1
      live_count = live_count + 1
    else
      stale = stale + 1
    end
  end
end
local twice = 0
for _, n in pairs(live) do if n > 1 then twice = twice + 1 end end
local missing = 0
for b = 0, buckets - 1 do
  for _, f in ipairs(redis.call('HKEYS', prefix .. 's:' .. b)) do
    if not live[b .. ':' .. f] then missing = missing + 1 end
  end
end
return {live_count, stale, missing, twice}
