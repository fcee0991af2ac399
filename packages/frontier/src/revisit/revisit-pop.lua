--[[
  revisit-pop:
  Takes due URLs off the wheel: each is leased (flagged, with a new
  generation and a wheel entry at now + lease, so a process that dies before
  the URL reaches its backlog loses nothing: it comes due again then) and
  returned; stale entries are dropped, early ones move to a narrower slot.
  KEYS[1] wheel slots (R slots)
  KEYS[2] counters (R n)
  ARGV[1] R, the revisit key prefix
  ARGV[2] buckets (of the per-URL state)
  ARGV[3] now (ds)
  ARGV[4] most URLs
  ARGV[5] lease (ds)
  Reply: {url, depth, url, depth, ...}, then the ds until the next slot (-1: none)
]]
--- @include "revisit.lua"
local prefix, buckets, now, most, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local out = {}
local taken = 0
local zadded = {}
local slots = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 16)
for _, slot in ipairs(slots) do
  local list = prefix .. 'w:' .. slot
  local entries = redis.call('LPOP', list, most - taken)
  if not entries or #entries < most - taken then
    -- The slot is empty now (an entry moved back to it this call is listed again by rv_index).
    redis.call('ZREM', KEYS[1], slot)
  end
  for _, entry in ipairs(entries or {}) do
    local gen = struct.unpack('>H', entry)
    local url = string.sub(entry, 3)
    local key, field = rv_locate(prefix, url, buckets)
    local value = redis.call('HGET', key, field)
    if value then
      local s = rv_decode(value)
      if s.gen == gen then
        if not rv_leased(s) and rv_due(s) > now then
          rv_index(prefix, s.gen, url, rv_due(s), now, zadded)
        else
          s.gen = (s.gen + 1) % 65536
          if not rv_leased(s) then s.flags = s.flags + RV_LEASED end
          redis.call('HSET', key, field, rv_encode(s))
          rv_index(prefix, s.gen, url, now + lease, now, zadded)
          out[#out + 1] = url
          out[#out + 1] = s.depth
          taken = taken + 1
        end
      end
    end
  end
  if taken >= most then break end
end
if taken > 0 then redis.call('HINCRBY', KEYS[2], 'leased', taken) end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local next_in = -1
if first[2] then next_in = math.max(0, tonumber(first[2]) - now) end
out[#out + 1] = next_in
return out
