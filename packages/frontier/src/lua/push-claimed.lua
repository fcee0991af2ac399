--[[
  frontier-push-claimed:
  Appends one URL that was already claimed in the seen-set (a redirect handed
  over by the job that followed it) to its group's backlog.
  KEYS[1] backlog count
  ARGV[1] backlog prefix
  ARGV[2] group
  ARGV[3] depth
  ARGV[4] job id (the URL's fingerprint)
  ARGV[5] URL
  ARGV[6] redirect hops so far
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "backlog.lua"
backlog_push(ARGV[1], ARGV[2], tonumber(ARGV[3]), backlog_entry(ARGV[4], ARGV[5], tonumber(ARGV[6])), now_ms)
return redis.call('INCR', KEYS[1])
