--[[
  now_ms(): the Redis server's clock in ms (with µs fractions).
  Time comes from the server (TIME), never from a client, so machines with
  skewed clocks agree. replicate_commands makes TIME before writes legal on
  Redis 5/6 (a no-op on Redis 7, which always replicates effects): include
  this before the script's first write.
]]
if redis.replicate_commands then redis.replicate_commands() end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
