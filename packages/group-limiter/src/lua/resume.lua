--[[
  resume:
  Ends a pause, forgets the 429 strikes and clears the wake horizon (it may lie far
  beyond the old pause; new work should not queue behind it).
  KEYS[1] group hash
  Reply: {Ok}
  Codes: 1 Ok
]]
redis.call('HDEL', KEYS[1], 'pausedUntil', 'pauseReason', 'wakeAt')
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'strikes', 0) end
return {1}
