--[[
  frontier-requeue:
  Hands a job's URLs it will not fetch back to the front of their group's
  backlog (they were next), in one atomic step with the job's own change, so
  each URL is in the backlog or in a job, never both, never neither:
  its data becomes the one URL left to it, or its progress says every URL it
  carried is handled (a retry of it then fetches nothing). Only while the
  caller holds the job's lock: a job another worker took over is left alone.

  The URLs handed back give back their start slots too: a release took a slot
  for each on the group's release horizon (`P at`) and set the group's score
  after the last of them. Left there, a rate-limited group whose jobs fail at
  their first URL (each then hands back the other 31) would get one URL
  through per 32 slots, a crawl of hours for minutes of work; so the horizon
  goes back to the earliest slot handed back (or now), and the group is due
  again from then. The gate still paces every start: a slot given back that
  another job of the group also holds only makes one of them wait at the gate.
  KEYS[1] backlog count
  KEYS[2] job hash
  KEYS[3] job lock
  ARGV[1] backlog prefix
  ARGV[2] group
  ARGV[3] lock token
  ARGV[4] the job's new data ('' = as is)
  ARGV[5] the job's new progress ('' = as is)
  ARGV[6] the release window (ms)
  ARGV[7..] per URL 5 values: its backlog bucket (its depth, and its priority when not 0: see backlog.lua), id, url, redirect hops, its slot ('' = none: it was due at its release)
  Reply: 1 done, 0 the lock is not the caller's (nothing written)
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/redis/lua/args.lua"
--- @include "backlog.lua"
if redis.call('GET', KEYS[3]) ~= ARGV[3] then return 0 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'data', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], 'progress', ARGV[5]) end
local prefix, group = ARGV[1], ARGV[2]
local window = tonumber(ARGV[6])
local units = (#ARGV - 6) / 5
if units == 0 then return 1 end
local now = now_ms()
-- The earliest slot handed back: a URL without one was due at its release, before now.
local earliest = now
-- Last first: LPUSH puts each in front of the one after it.
local buckets = {}
for u = units, 1, -1 do
  local at = 6 + (u - 1) * 5
  local bucket = ARGV[at + 1]
  redis.call('LPUSH', prefix .. 'q:' .. group .. ':' .. bucket, backlog_entry(ARGV[at + 2], ARGV[at + 3], tonumber(ARGV[at + 4])))
  buckets[bucket] = true
  local slot = tonumber(ARGV[at + 5])
  if slot and slot < earliest then earliest = slot end
end
for bucket in pairs(buckets) do
  local _, _, score = backlog_bucket_parts(bucket)
  redis.call('ZADD', prefix .. 'd:' .. group, score, bucket)
end
-- The slots given back: the horizon returns to the earliest (a 'probe:' mark,
-- a slow start in progress, has no slots to give back).
local horizon = tonumber(redis.call('HGET', prefix .. 'at', group))
if horizon and horizon > earliest then redis.call('HSET', prefix .. 'at', group, fmt(earliest)) end
-- Due once the earliest slot is within the window (as a release scores it);
-- a group that had left the backlogs comes back the same way.
local due = math.max(now, earliest - window)
local score = tonumber(redis.call('ZSCORE', prefix .. 'groups', group))
if not score or score > due then redis.call('ZADD', prefix .. 'groups', fmt(due), group) end
redis.call('INCRBY', KEYS[1], units)
return 1
