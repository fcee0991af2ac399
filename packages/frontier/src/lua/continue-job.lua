--[[
  frontier-continue:
  A job done with its URLs goes on with its group's next ones, taken from the
  backlog into the job's own data in one atomic step (each URL in the backlog
  or in a job, never both, never neither), as the release would have moved
  them into a new job now: the same start slots, taken from the same release
  horizon. A wide paced crawl's backlogs hold a few URLs per group at a time
  (a page adds its links as the job goes), so its jobs were short and BullMQ's
  work per job (add, wake, take, finish: about 40 commands) was most of the
  cost of a page; a job that goes on shares it with the URLs its pages found.
  The job's progress starts again at its first URL, so a worker that takes it
  over after a stall resumes among these.
  Declined (the job completes, and the group is due for a release at once:
  the links its pages added, held for it by admit.lua, are the release's) unless:
  - the caller still holds the job's lock;
  - the crawl queue holds at most `waiting` jobs: a worker going on instead
    of taking a waiting job (another group's) would make that one wait;
  - the group's next slot is within the window (a release would move its
    URLs now), it is not paused, past its slow start, and one job can keep
    its pace: a request holds its slot for less than the group's spacing
    (else the release runs several of its jobs at once, each on every k-th
    slot). A group without a rate, or one too fast to bind, gets as many URLs
    per job from the release as its backlog allows already.
  Runs through GroupLimiter.runPaced with the one group: KEYS and ARGV start
  with its layout (@crawlq/group-limiter's paced-groups.lua), K = PACED_KEYS
  and A = PACED_ARGS keys and arguments; then
  KEYS[K+1] backlog count
  KEYS[K+2] job hash
  KEYS[K+3] job lock
  KEYS[K+4] the crawl queue's prioritized set (its waiting jobs)
  ARGV[A+1] backlog prefix
  ARGV[A+2] lock token
  ARGV[A+3] window ms
  ARGV[A+4] URLs at most
  ARGV[A+5] waiting jobs at most (see above)
  ARGV[A+6] '1' = slow start
  ARGV[A+7] maxReady (waiting jobs per group at most)
  Reply: {Ok, URLs taken, the job's new data ('' when none were), declined for the group's pace
         (1: no rate, one too fast to bind, or slots further apart than the window: the caller need not ask for it again soon)}
         | {StalePolicy, version}
  Codes: 0 StalePolicy, 1 Ok
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/group-limiter/lua/paced-groups.lua"
--- @include "backlog.lua"
--- @include "release-units.lua"
--- @include "@crawlq/group-limiter/lua/policy-check.lua"
local K, A = PACED_KEYS, PACED_ARGS
local count_key, job_key, lock_key = KEYS[K + 1], KEYS[K + 2], KEYS[K + 3]
local prefix, token = ARGV[A + 1], ARGV[A + 2]
local window = tonumber(ARGV[A + 3])
local max_per_job = tonumber(ARGV[A + 4])
if redis.call('GET', lock_key) ~= token then return {1, 0, '', 0} end
-- ARGV[7]: the one group's name (paced-groups.lua's layout). Its backlog dry
-- (a job's last pages often find nothing new): nothing to take, nothing held.
local group = ARGV[7]
if redis.call('EXISTS', prefix .. 'd:' .. group) == 0 then return {1, 0, '', 0} end
local now = now_ms()
-- Declined: the links the job's pages added, held for it (see admit.lua), are
-- the release's from now on: the group is due at once if it waits (a release
-- finds its slots later than that itself).
local function decline(pace)
  redis.call('ZADD', prefix .. 'groups', 'XX', 'LT', fmt(now), group)
  return {1, 0, '', pace}
end
if redis.call('ZCARD', KEYS[K + 4]) > tonumber(ARGV[A + 5]) then return decline(0) end
local g = paced_group(1, now)
if g.interval <= 0 or g.interval > window then return decline(1) end
if g.paused_until > now or g.hold <= 0 then return decline(0) end
if rate_loose(g, tonumber(ARGV[A + 7])) then return decline(1) end
-- Requests that outlast the spacing (lately: the hold is a moving average)
-- need jobs of the group in parallel to keep its pace, one on each slot in turn.
if g.hold > g.interval then return decline(0) end
-- Past its slow start: a release has given it slots (its horizon), or its
-- backlog ran dry after requests were answered (see the release).
local horizon = redis.call('HGET', prefix .. 'at', g.name)
local wake = 0
if horizon and string.sub(horizon, 1, 6) == 'probe:' then return decline(0) end
if horizon then
  wake = tonumber(horizon) or 0
elseif ARGV[A + 6] == '1' and g.adaptive then
  return decline(0)
end
local wake_before = wake
local first = math.max(wake, now, g.tat - g.tau)
if first + slot_lag(g, first, now, window) > now + window then return decline(0) end

local units, empty
units, wake, empty = pop_slotted(prefix, g, {}, wake, now, window, max_per_job)
-- Nothing to take: nothing changed (a release cleans up a group it finds dry).
if #units == 0 then return {1, 0, '', 0} end
local next_score = now
if not empty then next_score = wake + slot_lag(g, wake, now, window) - window end
settle_group(prefix, g, {started = true, empty = empty, paused = false, wake = wake, wake_before = wake_before,
  probing = false, moved = #units, next_score = next_score, now = now, window = window})
redis.call('DECRBY', count_key, #units)
local data = units_data(g.name, units, units[1].id)
redis.call('HSET', job_key, 'data', data, 'progress', '0')
return {1, #units, data, 0}
