--[[
  write-definition:
  Compare-and-set of the definition: stores it only if the version is still
  the one the writer read (0 = none yet), so two producers racing cannot lose
  each other's change silently, and the first worker to publish wins.
  setAt is the Redis server's clock in whole ms, so writers with skewed clocks agree.
  KEYS[1] definition hash
  ARGV[1] expected version (0 = none yet)
  ARGV[2] values JSON
  ARGV[3] setBy
  Reply: {1, new version, setAt ms} or {0, current version}
]]
--- @include "@crawlq/redis/lua/clock.lua"
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if current ~= tonumber(ARGV[1]) then return {0, current} end
local at = math.floor(now_ms())
local version = current + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', version, 'setBy', ARGV[3], 'setAt', at)
return {1, version, at}
