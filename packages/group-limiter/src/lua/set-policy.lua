--[[
  set-policy:
  Stores the policy JSON unless identical, bumping an opaque version `seq:nonce`
  (the nonce keeps versions unique even if the keys were wiped and seq restarted).
  KEYS[1] policy hash
  ARGV[1] policy JSON
  ARGV[2] nonce
  Reply: {Ok | Unchanged, previous JSON ('' = none), version}
  Codes: 1 Ok, 5 Unchanged
]]
local current = redis.call('HMGET', KEYS[1], 'json', 'version')
if current[1] == ARGV[1] then return {5, current[1], current[2]} end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local version = seq .. ':' .. ARGV[2]
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'version', version)
return {1, current[1] or '', version}
