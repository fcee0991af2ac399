--[[
  bump-digest-seq:
  Moves the digest number past `ARGV[1]` if it is still that number (another
  process may have moved it already). Returns the current number.

  KEYS[1] state hash
  ARGV[1] the used digest number
  Reply: the current digest number
]]
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '1')
if seq == tonumber(ARGV[1]) then
  seq = seq + 1
  redis.call('HSET', KEYS[1], 'seq', string.format('%.0f', seq))
end
return string.format('%.0f', seq)
