--[[
  frontier-extend:
  Hands a job the URLs waiting in its own group's backlog, in one atomic step
  with the job's data: it fetches them after the ones it carries, on the
  group's next start slots, instead of their becoming a job of their own.
  A job costs BullMQ's add, take and finish and a visit of the release step
  (about 70 commands); this costs about a dozen for all the URLs it hands on.
  Called by a job right after its page added links, so a group crawled at its
  rate is carried by one job from link to link rather than by a job per wave
  of links.

  Only where the release step itself would pack the group's URLs into one job
  taking its slots in turn: the group has a rate that binds (its requests end
  well within its spacing: a job keeps up with slots one interval apart), its
  spacing is within the window (a job sleeps between its URLs no longer than
  a released job waits for its slot), it is not paused, the probe of its slow start
  is done (the caller may be that probe: its page is in), and it does not adapt its pace (the release step
  probes such a group again after a dry spell). Only while the caller holds
  the job's lock and the job's data still carries the URLs the caller counts,
  never past the most URLs a job may carry, and only when the first new slot follows the
  job's own last slot within the window (slots another job holds come first).
  The gate still admits every start.

  Runs through GroupLimiter.runPaced with the job's group alone (paced-groups.lua), then
  KEYS[K+1] backlog count
  KEYS[K+2] the job's hash
  KEYS[K+3] the job's lock
  ARGV[A+1] backlog prefix
  ARGV[A+2] lock token
  ARGV[A+3] URLs the job carries (its own and its batch)
  ARGV[A+4] URLs the job carries at most
  ARGV[A+5] the job's last slot (Redis ms, '' = none: its URLs are due)
  ARGV[A+6] window ms
  ARGV[A+7] '1' = the caller lost the answer of its last call (a failed round
            trip): the job's data is read first, and any URLs it holds past
            `carried` are the answer
  ARGV[A+8] the job's id (its entry in the group's set of released jobs)
  No policy version check (a command on every call): the group's limits may
  be one call old, which moves only the slots; the gate admits every start.
  Reply: {Ok, the URLs handed on as a JSON array of job units ('' = none)}
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/group-limiter/lua/paced-groups.lua"
--- @include "backlog.lua"
local K, A = PACED_KEYS, PACED_ARGS
local prefix = ARGV[A + 1]
local group = ARGV[7]
local none = {1, ''}
local carried = tonumber(ARGV[A + 3])
-- The job's data as stored: its batch, or nil when the job is gone or holds
-- other URLs than the caller counts. A job holding more is one an earlier
-- call handed URLs on to whose answer the caller did not get: those come
-- back again, and nothing new (so a call retried after a lost answer loses nothing).
local function stored_job()
  local data = redis.call('HGET', KEYS[K + 2], 'data')
  if not data then return nil end
  local job = cjson.decode(data)
  if type(job.batch) ~= 'table' then job.batch = {} end
  return job
end
local function lost_answer(job)
  local lost = {}
  for i = carried, #job.batch do lost[#lost + 1] = job.batch[i] end
  return {1, cjson.encode(lost)}
end
if redis.call('GET', KEYS[K + 3]) ~= ARGV[A + 2] then return none end
if ARGV[A + 7] == '1' then
  local job = stored_job()
  if job and #job.batch + 1 > carried then return lost_answer(job) end
end
-- Most calls find nothing of the group waiting (its links were duplicates or another group's).
local buckets_key = prefix .. 'd:' .. group
local buckets = redis.call('ZRANGE', buckets_key, 0, -1)
if not buckets[1] then return none end
local now = now_ms()
local window = tonumber(ARGV[A + 6])
local g = paced_group(1, now)
if g.interval <= 0 or g.interval > window or g.adaptive or g.paused_until > now then return none end
if g.hold <= 0 or 1.5 * g.hold > g.interval then return none end
local horizon = redis.call('HGET', prefix .. 'at', group)
if horizon and string.sub(horizon, 1, 6) == 'probe:' then
  -- A slow start's probe is done once nothing of the group waits or runs but
  -- the caller, whose request was answered (its page added the links): the
  -- caller goes on with the group's slots, as the next release would (the
  -- caller is taken, so it leaves the group's set of released jobs).
  redis.call('SREM', prefix .. 'r:' .. group, ARGV[A + 8])
  if redis.call('SCARD', prefix .. 'r:' .. group) > 0 then return none end
  if redis.call('ZCOUNT', g.leases, fmt(now), '+inf') > 0 then return none end
  horizon = false
end
local wake = tonumber(horizon) or 0
local first = math.max(wake, now, g.tat - g.tau)
local last = tonumber(ARGV[A + 5]) or now
if first > math.max(last, now) + g.interval + window then return none end

local job = stored_job()
if not job then return none end
local batch = job.batch
if #batch + 1 > carried then return lost_answer(job) end
if #batch + 1 < carried then return none end
local room = tonumber(ARGV[A + 4]) - carried
if room <= 0 then return none end

-- As the release step hands a rate-bound group's slots out (see release.lua).
local function slot_lag(slot)
  if slot > now then return math.min(g.lag, window / 2) end
  return 0
end
local units = {}
local empty = false
-- Bucket by bucket (highest priority, then lowest depth first), each list's
-- entries in one LPOP: a list that gives fewer than asked is drained.
local b = 1
local drained = {}
while #units < room do
  local bucket = buckets[b]
  if not bucket then
    empty = true
    break
  end
  local want = room - #units
  local entries = redis.call('LPOP', prefix .. 'q:' .. group .. ':' .. bucket, want)
  if not entries then entries = {} end
  local depth, priority = backlog_bucket_parts(bucket)
  for _, entry in ipairs(entries) do
    local slot = math.max(wake, now, g.tat - g.tau)
    wake = slot + g.interval
    local id, url, hops = backlog_decode(entry)
    local unit = {id = id, url = url, depth = depth}
    if priority ~= 0 then unit.priority = priority end
    if hops > 0 then unit.redirects = hops end
    if slot > now then
      unit.due = math.floor(slot)
      local lag = slot_lag(slot)
      if lag >= 1 then unit.lag = math.floor(lag) end
    end
    units[#units + 1] = unit
    batch[#batch + 1] = unit
  end
  if #entries < want then
    drained[#drained + 1] = bucket
    b = b + 1
  end
end
if #drained > 0 then
  if empty then redis.call('DEL', buckets_key) else redis.call('ZREM', buckets_key, unpack(drained)) end
end
if #units == 0 then return none end
job.batch = batch
redis.call('HSET', KEYS[K + 2], 'data', cjson.encode(job))
redis.call('DECRBY', KEYS[K + 1], #units)
redis.call('HSET', prefix .. 'at', group, fmt(wake))
local groups_key = prefix .. 'groups'
if empty then
  -- As a release that drains a group: it leaves the groups waiting, its
  -- horizon stays while its slots are ahead. (Its set of released jobs stays:
  -- an upper bound, pruned when a release reads it.)
  redis.call('ZREM', groups_key, group)
else
  -- The rest is due when its first slot is within the window, as a release scores it.
  redis.call('ZADD', groups_key, 'XX', fmt(wake + slot_lag(wake) - window), group)
end
return {1, cjson.encode(units)}
