--[[
  revisit-hint:
  Applies revisit hints (a sitemap's) to URLs, atomically per URL:
  - a known URL whose hinted last change (ds, the caller has made a future
    one now) is newer than its last fetch, and that is not leased, becomes due
    at now, or once its minimum interval since that fetch has passed: its
    interval is shortened to that (rounded down unless the minimum binds, then
    up: never due before it) and a wheel entry added with a new generation;
  - a URL with no state gets its prior interval stored in `R h:` for its
    first fetch (the caller passes one only for URLs it just admitted).
  KEYS: none
  ARGV[1] R, the revisit key prefix
  ARGV[2] buckets (of the per-URL state)
  ARGV[3] now (ds)
  ARGV[4..] per URL 4 values: URL, last change (ds, '' none), minimum interval (ds),
          prior interval (f16 code, '' none)
  Reply: the number of URLs made due
]]
--- @include "revisit.lua"
local prefix, buckets, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local zadded = {}
local made_due = 0
for i = 4, #ARGV, 4 do
  local url, changed, min, prior = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local key, field, bucket = rv_locate(prefix, url, buckets)
  local value = redis.call('HGET', key, field)
  if value then
    if changed ~= '' then
      local s = rv_decode(value)
      if tonumber(changed) > s.fetched and not rv_leased(s) then
        local target = math.max(now, s.fetched + min)
        if rv_due(s) > target then
          local gap = target - s.fetched
          local code = rv_code(gap, false)
          if rv_f16(code) < min then code = rv_code(gap, true) end
          s.interval = code
          s.gen = (s.gen + 1) % 65536
          redis.call('HSET', key, field, rv_encode(s))
          rv_index(prefix, s.gen, url, rv_due(s), now, zadded)
          made_due = made_due + 1
        end
      end
    end
  elseif prior ~= '' then
    redis.call('HSET', prefix .. 'h:' .. bucket, field, struct.pack('>H', tonumber(prior)))
  end
end
return made_due
