--[[
  revisit-read:
  Reads a URL's state for a fetch. Reply: {} when the URL is not known (a
  first fetch), {its hint (hex)} when it is not known but has a hint (see
  `R h:`); else {last fetch (ds), interval (f16), change age (f16),
  signature (hex), generation, depth, flags, size code, changes (1/16),
  unchanged time (f16), changed time (f16), validator bytes, archived
  response (hex, '' none)}.
  KEYS: none
  ARGV[1] R, the revisit key prefix
  ARGV[2] buckets (of the per-URL state)
  ARGV[3] URL
]]
--- @include "revisit.lua"
local key, field, bucket = rv_locate(ARGV[1], ARGV[3], tonumber(ARGV[2]))
local value = redis.call('HGET', key, field)
if not value then
  local hint = redis.call('HGET', ARGV[1] .. 'h:' .. bucket, field)
  if hint then return {rv_hex(hint)} end
  return {}
end
local s = rv_decode(value)
local archived = redis.call('HGET', ARGV[1] .. 'a:' .. bucket, field) or ''
return {s.fetched, s.interval, s.age, rv_hex(s.sig), s.gen, s.depth, s.flags, s.size, s.x, s.t0, s.tc, rv_hex(s.tail), rv_hex(archived)}
