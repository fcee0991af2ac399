--[[
  frontier-release:
  Stage two of the frontier: moves URLs from their groups' backlogs into the
  crawl queue as BullMQ jobs, each in the same atomic step as its pop, only
  when its group can use it now:
  - a rate-limited group gets a job only when its next start slot (the
    gate's own arithmetic: its pacing state, Crawl-delay and adaptive pace
    included, on a release horizon of the backlog's own, `P at`) is within
    `window`; each release takes the slot;
  - a group's first job runs alone (slow start: more follow once it is done);
    after that a group has at most cap - in flight jobs waiting in the queue (at least
    one for a group without a rate) (cap: its concurrency cap, or `defaultCap`; never more than `maxReady`:
    a group that may run thousands at once still gets them a few at a time,
    a release every few milliseconds); a group its rate holds back (short
    requests) every slot of the window, each job with its slot (`due`); a paused group one, a scout
    the gate defers, which keeps the group's wait on record and its
    --max-blocked bound running;
  - the queue holds at most `readyTarget` waiting jobs, and one call releases
    at most `room`.
  So a job that exists is due, and groups take turns: each release moves a
  group behind those waiting longer (the groups set is ordered by next release).

  Runs through GroupLimiter.runPaced: KEYS and ARGV start with its layout
  (@crawlq/group-limiter's paced-groups.lua, one entry per candidate group),
  K = PACED_KEYS and A = PACED_ARGS keys and arguments; then
  KEYS[K+1] backlog count
  KEYS[K+2..K+10] the crawl queue's keys (crawlJobWriteKeys)
  ARGV[A+1] backlog prefix
  ARGV[A+2] job key prefix
  ARGV[A+3] job options JSON
  ARGV[A+4] window ms
  ARGV[A+5] room
  ARGV[A+6] readyTarget
  ARGV[A+7] defaultCap
  ARGV[A+8] highest BullMQ priority
  ARGV[A+9] maxReady (waiting jobs per group at most, whatever its cap)
  ARGV[A+10] '1' = slow start
  ARGV[A+11] URLs per job at most
  ARGV[A+12] this shard's share of readyTarget: a job gets up to the backlog's URLs over that share (so near the end every URL left can run in parallel)
  Reply: {Ok, released (URLs), saturated (1: more was ready, held back only by maxReady or the queue's room), jobs written,
          ms until the first group's score (when a release next has work; -1: no group waits)} | {StalePolicy, version}
  A group's score in the groups set is when a release may next move some of
  its URLs: its next jobs' first slots less the window, its pause's end less
  the window, or now (held back by its cap, its slow start or the queue's room).
  Codes: 0 StalePolicy, 1 Ok
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/group-limiter/lua/paced-groups.lua"
--- @include "@crawlq/queue/lua/write-crawl-job.lua"
--- @include "backlog.lua"
--- @include "release-units.lua"
--- @include "@crawlq/group-limiter/lua/policy-check.lua"
local now = now_ms()
local K, A = PACED_KEYS, PACED_ARGS
local count_key = KEYS[K + 1]
local queue_keys = {}
for i = 1, 9 do queue_keys[i] = KEYS[K + 1 + i] end
local prioritized, delayed = queue_keys[4], queue_keys[5]
local prefix, job_prefix, opts_json = ARGV[A + 1], ARGV[A + 2], ARGV[A + 3]
local window = tonumber(ARGV[A + 4])
local room = math.min(tonumber(ARGV[A + 5]), tonumber(ARGV[A + 6]) - redis.call('ZCARD', prioritized))
local default_cap = tonumber(ARGV[A + 7])
local max_priority = tonumber(ARGV[A + 8])
local max_ready = tonumber(ARGV[A + 9])
local slow_start = ARGV[A + 10] == '1'
local max_per_job = tonumber(ARGV[A + 11])
local pack = math.max(1, math.min(max_per_job, math.floor(tonumber(redis.call('GET', count_key) or '0') / tonumber(ARGV[A + 12]))))
local slow_start_ms = 2000
local groups_key = prefix .. 'groups'
local release_at_key = prefix .. 'at'
local timestamp = math.floor(now)
local released = 0
local jobs = 0
local saturated = 0

-- The members of ids absent from the sorted set: one ZMSCORE per 1,000 (unpack's stack is limited).
local function absent_from(zset, ids)
  local absent = {}
  for first = 1, #ids, 1000 do
    local last = math.min(first + 999, #ids)
    local scores = redis.call('ZMSCORE', zset, unpack(ids, first, last))
    for j = first, last do
      if not scores[j - first + 1] then absent[#absent + 1] = ids[j] end
    end
  end
  return absent
end
-- Counts the ready set's members still waiting in BullMQ's sets (prioritized,
-- or deferred by the gate) and drops the rest: a few commands per set, not per member.
local function ready_members(ready_key)
  local ids = redis.call('SMEMBERS', ready_key)
  local gone = absent_from(delayed, absent_from(prioritized, ids))
  for first = 1, #gone, 1000 do
    redis.call('SREM', ready_key, unpack(gone, first, math.min(first + 999, #gone)))
  end
  return #ids - #gone
end

-- One job of the group: its first URL's fields, the others as its batch; its
-- id is the first URL's. Unless a job with that id still exists (the job that
-- fetched the URL last, still on its other URLs or deferred, when a revisit of
-- it comes due): BullMQ would keep that job and drop this one, and every URL it
-- carries with it. This one then gets the id with a number of its own (its
-- data names its first URL's id then).
local function write_units(group, units, ready_key)
  local id = units[1].id
  if redis.call('EXISTS', job_prefix .. id) == 1 then id = id .. '-' .. redis.call('INCR', prefix .. 'idSeq') end
  write_crawl_job(queue_keys, job_prefix, id, units_data(group, units, id ~= units[1].id and units[1].id or nil), opts_json, math.min(units[1].depth + 1, max_priority), timestamp)
  redis.call('SADD', ready_key, id)
end

for i = 1, PACED_D do
  if room <= 0 then break end
  local g = paced_group(i, now)
  local score = tonumber(redis.call('ZSCORE', groups_key, g.name))
  -- Gone (another process drained it) or not due yet by this clock.
  if score and score <= now + window then
    local ready_key = prefix .. 'r:' .. g.name
    local paused = g.paused_until > now
    local bound = 1
    local in_flight = 0
    local rate_bound = false
    if not paused then
      local cap = g.conc
      if cap <= 0 then cap = default_cap end
      in_flight = redis.call('ZCOUNT', g.leases, fmt(now), '+inf')
      local free = cap - in_flight
      -- A group without a rate keeps one job waiting even at its cap, so a
      -- finished request is followed at once. A rate-limited one does not: a
      -- worker would take that job at once, the gate would send it back
      -- (a deferral, several round trips), and its slot could pass unused.
      if g.interval > 0 then free = math.max(0, free) else free = math.max(1, free) end
      bound = math.min(max_ready, free)
      -- A group its rate holds back (its requests end well within the cap's
      -- share of the spacing: mean hold at most half of cap - 1 intervals) gets
      -- every slot of the window at once, whatever is in flight: the cap does
      -- not bind, and larger releases wake idle workers fewer times. Each job
      -- carries its slot, so its worker asks the gate only when it is near.
      if g.interval > 0 and g.hold > 0 and (g.conc <= 0 or g.hold * 2 <= g.interval * (g.conc - 1)) and not rate_loose(g, max_ready) then
        rate_bound = true
        bound = max_ready
      end
    end
    -- The set may still list jobs workers have taken: an upper bound. Only
    -- when it would hold the group back are its members checked against
    -- BullMQ's own sets (waiting, or deferred by the gate) and the rest dropped.
    local horizon = redis.call('HGET', release_at_key, g.name)
    local ready = redis.call('SCARD', ready_key)
    -- A probe whose request is still in flight (and not yet past its 2 s)
    -- goes on probing whatever waits: its set need not be read at each release.
    local probe = horizon and string.sub(horizon, 1, 6) == 'probe:'
    local probe_busy = probe and slow_start and in_flight > 0 and now - tonumber(string.sub(horizon, 7)) <= slow_start_ms
    if not probe_busy and (ready >= bound or probe) then
      ready = ready_members(ready_key)
    end
    -- Slow start: a group's first job runs alone, and more follow only once
    -- it is done (nothing of the group waiting or in flight): its first
    -- request shows the site unloaded (adaptive pacing learns its latency
    -- from it), and a new site does not get the group's whole cap at once.
    -- The horizon field is absent before the first release, 'probe:<ms>' after it.
    -- A group whose backlog ran dry loses its horizon (once its slots are past), but not its hold time:
    -- a group with one has had a request answered, so it is no new site and
    -- goes on without a probe (a wide crawl's backlogs run dry again and
    -- again, and a probe each time ran its URLs one at a time, looked at by
    -- every release meanwhile). Unless it adapts its pace: each probe is a
    -- request that meets the site unloaded, the baseline its latency is judged by.
    local probing = horizon ~= false and string.sub(horizon, 1, 6) == 'probe:'
    local started = horizon ~= false and not probing
    if not slow_start or (horizon == false and g.hold > 0 and not g.adaptive) then
      started = true
    elseif horizon == false then
      bound = math.min(bound, 1)
      -- A group released before without slow start may still list a job taken since.
      if ready >= bound then ready = ready_members(ready_key) end
    elseif probing then
      -- Done when nothing of the group waits or runs; a lease held long (a
      -- sitemap streaming in) ends the probe after 2 s all the same.
      if ready == 0 and (in_flight == 0 or now - tonumber(string.sub(horizon, 7)) > slow_start_ms) then
        started = true
      else
        bound = 0
      end
    end
    -- Due at every release unless its slots or a pause say when: the jobs
    -- holding it back (its cap, its slow start, the queue's room) may be
    -- taken or done by the next one.
    local next_score = now
    -- The release horizon is the backlog's own: the gate's wake horizon also
    -- takes a slot for every deferral, and sharing it would hold releases back
    -- by every job the gate sent back.
    local wake = 0
    if started and horizon then wake = tonumber(horizon) or 0 end
    local wake_before = wake
    local cursor = {}
    local empty = false
    local slot_bound = false
    local moved = 0
    -- URLs per job (a job fetches its URLs one after another, sharing
    -- BullMQ's per-job work):
    -- - a group without a rate: several while the backlogs hold more than the
    --   queue's room many times over; one near the end, so every URL left can
    --   run in parallel;
    -- - a rate-limited group, whose pace is its rate's: up to the most a job
    --   may carry, its slots taken in turn by k jobs (each gets every k-th
    --   slot). k makes a job's slots 1.5 hold times apart (the hold runs from
    --   the admission, shortly before the start, to the response; the half is
    --   for the parse and the record), at most the group's cap (each job holds
    --   one of its slots at a time), and k slots must fit the window (a job
    --   waits in its worker between its URLs no longer than a job of one URL
    --   waits for its slot, so slow groups use no more worker slots). Only
    --   the jobs' first slots need be within the window.
    -- Otherwise (the first job of a slow start, a paused group's scout, a
    -- group whose requests outlast its cap's share) one URL per job.
    local per_job = 1
    local interleave = 1
    local loose = not paused and started and rate_loose(g, max_ready)
    if not paused and started then
      if g.interval <= 0 or loose then
        per_job = pack
      elseif max_per_job > 1 and g.hold > 0 and (g.conc <= 0 or g.hold <= g.conc * g.interval) then
        -- Capped at the cap, a job's slots may be closer than 1.5 holds (never
        -- than one): it keeps up on average, and the gate re-paces the group
        -- from a start that runs late.
        interleave = math.max(1, math.ceil(1.5 * g.hold / g.interval))
        if g.conc > 0 then interleave = math.min(interleave, g.conc) end
        if interleave * g.interval > window then interleave = 0 end
        -- The ready count is an upper bound (see above): checked before it decides.
        -- Against the most waiting jobs a group may hold, not its free slots: the
        -- new jobs' slots come after all the slots already given out (the
        -- horizon), when the jobs holding those are done with them, and the
        -- gate checks the cap at each start all the same.
        if interleave > max_ready - ready then ready = ready_members(ready_key) end
        if interleave > 0 and interleave <= math.min(max_ready - ready, room) then
          local first = math.max(wake, now, g.tat - g.tau)
          local last_first = first + (interleave - 1) * g.interval + slot_lag(g, first, now, window)
          if last_first <= now + window then
            per_job = max_per_job
          else
            -- Not yet: released when the first slots of all its jobs are within the window.
            next_score = last_first - window
            slot_bound = true
            per_job = 0
          end
        end
      end
    end
    if per_job > 1 and g.interval > 0 and not loose then
      local carriers = {}
      for c = 1, interleave do carriers[c] = {} end
      local taken
      taken, wake, empty = pop_slotted(prefix, g, cursor, wake, now, window, interleave * per_job)
      for t, unit in ipairs(taken) do
        local units = carriers[((t - 1) % interleave) + 1]
        units[#units + 1] = unit
      end
      for c = 1, interleave do
        if #carriers[c] > 0 then
          write_units(g.name, carriers[c], ready_key)
          ready = ready + 1
          room = room - 1
          jobs = jobs + 1
          moved = moved + #carriers[c]
        end
      end
      -- Its next release comes when the next jobs' first slots are within the window.
      if not empty then
        next_score = math.max(next_score, wake + (interleave - 1) * g.interval + slot_lag(g, wake, now, window) - window)
        slot_bound = true
      end
    end
    while per_job == 1 or (per_job > 1 and (g.interval <= 0 or loose)) do
      if ready >= bound or room <= 0 then break end
      local units = {}
      while #units < per_job do
        local next_wake = wake
        local slot = now
        local lag = 0
        if not paused and g.interval > 0 then
          slot = math.max(wake, now, g.tat - g.tau)
          if rate_bound then lag = slot_lag(g, slot, now, window) end
          if slot + lag > now + window then
            next_score = slot + lag - window
            slot_bound = true
            break
          end
          next_wake = slot + g.interval
        end
        local entry, depth, priority = backlog_pop(prefix, g.name, cursor)
        if not entry then
          empty = true
          break
        end
        wake = next_wake
        local id, url, hops = backlog_decode(entry)
        local due = nil
        if rate_bound and slot > now then due = slot end
        units[#units + 1] = {id = id, depth = depth, json = unit_json(url, depth, priority, hops, due, lag)}
      end
      if #units == 0 then break end
      write_units(g.name, units, ready_key)
      ready = ready + 1
      room = room - 1
      jobs = jobs + 1
      moved = moved + #units
      if empty or slot_bound then break end
    end
    released = released + moved
    -- More is ready to go, held back only by the most waiting jobs a group or
    -- the queue may hold (not by its pace or its cap): the caller releases
    -- again soon, since workers take such jobs faster than the fleet's pace.
    if not empty and not slot_bound and (bound >= max_ready or room <= 0) then saturated = 1 end
    settle_group(prefix, g, {started = started, empty = empty, paused = paused, wake = wake, wake_before = wake_before,
      probing = probing, moved = moved, next_score = next_score, now = now, window = window})
    -- Listed for `group list` from its first job on (a group admitted before is listed already).
    if moved > 0 and not g.listed then redis.call('SADD', KEYS[2], g.name) end
  end
end

if released > 0 then redis.call('DECRBY', count_key, released) end
-- When a release next has work: the first group's score (-1: no group waits).
local first = redis.call('ZRANGE', groups_key, 0, 0, 'WITHSCORES')
local next_due = -1
if first[2] then next_due = math.max(0, math.ceil(tonumber(first[2]) - now)) end
return {1, released, saturated, jobs, next_due}
