--[[
  leases (include):
  The lease set's upkeep, shared by the scripts that change a lease:
  `keep_leases(key, now)` keeps the set until its latest lease expires (a
  lease scored later must not outlive its key; a server's lease set),
  `extend_leases(key, lease_end, kept_to, now, lease_ms)` does the same for a
  group's set at a cost of nothing on most admissions: the group's
  `leasesKeptTo` field says until when the set is kept, and only a lease
  ending past it extends the set, by a whole lease period more (one PEXPIRE
  a minute for a busy group, where every admission made two commands). It
  returns the new time to record, or nil. A set whose leases were all given
  back is deleted by Redis and comes back without an expiry, which only keeps
  it longer (until its next extension: acquire renews it every 32nd
  admission). No script may give a group's set an expiry shorter than its
  field: that would drop leases the field says are kept. And
  `give_back_late(group_key, leases_key, lease_id)` gives back a start that
  came too late to be used, counted in `lateStarts` once, if it was held.
]]
local function keep_leases(key, now)
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.ceil(tonumber(latest[2]) - now) + 1000)
end
local function extend_leases(key, lease_end, kept_to, now, lease_ms)
  if lease_end + 1000 <= kept_to then return nil end
  local to = lease_end + lease_ms + 1000
  redis.call('PEXPIRE', key, math.ceil(to - now))
  return to
end
local function give_back_late(group_key, leases_key, lease_id)
  if redis.call('ZREM', leases_key, lease_id) == 1 then redis.call('HINCRBY', group_key, 'lateStarts', 1) end
end
