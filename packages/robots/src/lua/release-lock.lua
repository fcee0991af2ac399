--[[
  robots-release-lock:
  Deletes the fetch lock only if it still holds our token, so a worker whose
  lock expired (slow fetch) cannot delete the lock a newer fetcher holds.
  KEYS[1] the fetch lock
  ARGV[1] our token
  Reply: 1 deleted, 0 not ours
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
