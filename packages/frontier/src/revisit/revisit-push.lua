--[[
  revisit-push:
  Appends leased URLs to their groups' backlogs (stage one of the frontier),
  as a redirect's target is: already seen, so no budget or dedupe applies.
  KEYS[1] backlog count
  ARGV[1] backlog prefix
  ARGV[2..] per URL 4 values: group, depth, job id (fingerprint), URL
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "../lua/backlog.lua"
local n = 0
for i = 2, #ARGV, 4 do
  backlog_push(ARGV[1], ARGV[i], tonumber(ARGV[i + 1]), backlog_entry(ARGV[i + 2], ARGV[i + 3], 0), now_ms)
  n = n + 1
end
return redis.call('INCRBY', KEYS[1], n)
