--[[
  write-releases:
  Writes what a process's releases of some groups left to write (see
  fold-releases.lua), for groups it has not admitted a start of since.
  KEYS[i] group i's hash
  ARGV[4(i-1)+1..4] group i's folded releases: hold decay, addend, last sample, requests that went out
  Reply: 1
  Codes: 1 Ok
]]
--- @include "fold-releases.lua"
for i = 1, #KEYS do
  local at = 4 * (i - 1)
  local h = redis.call('HMGET', KEYS[i], 'holdMs', 'started')
  redis.call('HSET', KEYS[i], unpack(fold_releases(h[1], h[2], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4])))
end
return 1
