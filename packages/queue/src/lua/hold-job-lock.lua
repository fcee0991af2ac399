--[[
  queue-hold-job-lock: confirms that a worker still holds a job before it
  writes the job's record, and keeps the job for another lock period: the
  lock holds the token, its expiry is pushed back; the lock is gone but the
  job is still active (its lock ran out while Redis was away, and no stalled
  check handed the job on), the lock is taken again and the job leaves the
  stalled candidates, as a renewal would have done. Anything else (another
  worker's token, or the job no longer active: handed back to the queue, or
  finished by someone else) means another worker fetches and records this
  job, so this one must not.
  KEYS[1] the job's lock
  KEYS[2] the queue's active list
  KEYS[3] the queue's stalled set
  ARGV[1] the worker's lock token
  ARGV[2] lock duration (ms)
  ARGV[3] job id
  Reply: 1 held (renewed or taken again), 0 lost
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
if not redis.call('LPOS', KEYS[2], ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SREM', KEYS[3], ARGV[3])
return 1
