--[[
  revisit-due:
  Wheel entries due by now and by now + horizon: one pass over the slots up
  to the horizon (one LLEN each), inside Redis.
  KEYS[1] wheel slots (R slots)
  ARGV[1] R, the revisit key prefix
  ARGV[2] now (ds)
  ARGV[3] horizon end (ds)
  Reply: {due now, due by the horizon}
]]
local now, horizon = tonumber(ARGV[2]), tonumber(ARGV[3])
local due_now, due_soon = 0, 0
local slots = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', horizon, 'WITHSCORES')
for i = 1, #slots, 2 do
  local n = redis.call('LLEN', ARGV[1] .. 'w:' .. slots[i])
  due_soon = due_soon + n
  if tonumber(slots[i + 1]) <= now then due_now = due_now + n end
end
return {due_now, due_soon}
