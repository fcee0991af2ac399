--[[
  frontier-admit:
  Admits candidate URLs in one atomic step: picks those that are new and
  within the page budgets, counts them against the budgets, marks them seen
  and appends them to their groups' backlogs. A URL is in the seen-set if and
  only if it is somewhere (backlog, queue or done), whatever process dies when.

  KEYS[1] seen-set meta
  KEYS[2] admitted
  KEYS[3] admittedPerGroup
  KEYS[4] backlog count
  KEYS[5] pages granted to this shard (see grant-pages.lua)
  ARGV[1..6] the seen-set config (configArgs in seen-set.ts): mode ('exact' | 'bloom'),
            bits, hashes, partBits, expectedUrls, falsePositiveRate (bloom numbers 0 in exact mode)
  ARGV[7] maxPages (0 = none; -1 = a shard's: what the crawl granted it, KEYS[5])
  ARGV[8] maxPagesPerGroup (0 = none)
  ARGV[9] depth
  ARGV[10] backlog prefix
  ARGV[11] a grant this shard was given that KEYS[5] may not hold yet (0 = none)
  ARGV[12] priority (0 = none: see backlog.lua)
  ARGV[13..24] the hand-on ('' in ARGV[13] = none): the links of the caller's
            own group go straight into the caller's job instead of its
            group's backlog, where the release step would pack them into a
            job of the group taking its slots in turn. Only when nothing of
            the group waits in its backlog (its links are then next, in any
            order), its rate binds (its requests end well within its spacing:
            a job keeps up with slots one interval apart), that spacing is
            within the window (a job sleeps between its URLs no longer than a
            released job waits for its slot), it is not paused, the probe of
            its slow start is done (the caller may be that probe: its page is
            in), and it does not adapt its pace (the release step probes such
            a group again after a dry spell); only while the caller holds the
            job's lock and the job's data holds the URLs the caller counts,
            and never past the most URLs a job may carry. Each URL handed on
            takes the group's next slot on the backlog's release horizon
            (`P at`), as a release would give it. So a group crawled at its
            rate is carried by one job from link to link, instead of a job
            per wave of links (BullMQ's add, take and finish, and a release).
            The gate still admits every start.
            ARGV[13] the group, ARGV[14] lock token, ARGV[15] the job's id,
            ARGV[16] URLs the job carries (its own and its batch), ARGV[17]
            URLs a job carries at most, ARGV[18] window ms, ARGV[19..25] the
            group's limits (GroupLimiter.pacingOf: see paced-group.lua)
  ARGV[26..] per candidate 4 values: fingerprint (16 bytes), job id (the fingerprint's text), group, URL
  KEYS[6..9] with a hand-on: the job's hash, the job's lock, the group's
            hash and lease set (GroupLimiter.pacingOf); else KEYS[1] again
  Reply: {Ok, one ReserveCode per candidate, the URLs handed on as a JSON array of job units ('' = none)} | {ModeMismatch, stored}
  Codes: 1 Ok, 2 ModeMismatch (SeenScriptStatus); per candidate 1 Admitted,
         0 Duplicate, -1 OverPageLimit, -2 OverGroupLimit (ReserveCode)
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "seen-set.lua"
--- @include "backlog.lua"
--- @include "@crawlq/group-limiter/lua/paced-group.lua"
local FIRST = 26
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local maxPages = tonumber(ARGV[7])
local maxPerGroup = tonumber(ARGV[8])
local depth = tonumber(ARGV[9])
local prefix = ARGV[10]
local bucket = backlog_bucket(depth, tonumber(ARGV[12]))
-- The page cap, if any: the crawl's, or a shard's grant (raised to a grant
-- given since, which a process that died before this call never stored).
local cap = nil
if maxPages > 0 then
  cap = maxPages
elseif maxPages < 0 then
  cap = tonumber(redis.call('GET', KEYS[5]) or '0')
  local given = tonumber(ARGV[11])
  if given > cap then
    cap = given
    redis.call('SET', KEYS[5], cap)
  end
end
-- Read only when a budget needs it: the count is added to at the end.
local admitted = 0
if cap then admitted = tonumber(redis.call('GET', KEYS[2]) or '0') end
local result = {1}
local new = 0
local pushed = 0

-- The hand-on, when the caller asks for one and it applies: the job's data,
-- the group's pacing, the URLs handed on so far and the horizon.
local function open_hand_on()
  local group = ARGV[13]
  if group == '' then return nil end
  -- Nothing of the group waiting: its registered buckets' lists are all gone
  -- (a release that took a bucket's last entry leaves it registered until its next pop).
  for _, waiting in ipairs(redis.call('ZRANGE', prefix .. 'd:' .. group, 0, -1)) do
    if redis.call('EXISTS', prefix .. 'q:' .. group .. ':' .. waiting) == 1 then return nil end
  end
  if redis.call('GET', KEYS[7]) ~= ARGV[14] then return nil end
  local carried = tonumber(ARGV[16])
  local room = tonumber(ARGV[17]) - carried
  if room <= 0 then return nil end
  local now = now_ms()
  local window = tonumber(ARGV[18])
  local g = paced_group_of(group, KEYS[8], KEYS[9], {ARGV[19], ARGV[20], ARGV[21], ARGV[22], ARGV[23], ARGV[24], ARGV[25]}, now)
  if g.interval <= 0 or g.interval > window or g.adaptive or g.paused_until > now then return nil end
  if g.hold <= 0 or 1.5 * g.hold > g.interval then return nil end
  local horizon = redis.call('HGET', prefix .. 'at', group)
  if horizon and string.sub(horizon, 1, 6) == 'probe:' then
    -- A slow start's probe is done once nothing of the group waits or runs
    -- but the caller, whose request was answered: the caller goes on with
    -- the group's slots, as the next release would (it is taken, so it
    -- leaves the group's set of released jobs).
    redis.call('SREM', prefix .. 'r:' .. group, ARGV[15])
    if redis.call('SCARD', prefix .. 'r:' .. group) > 0 then return nil end
    if redis.call('ZCOUNT', g.leases, fmt(now), '+inf') > 0 then return nil end
    horizon = false
  end
  local data = redis.call('HGET', KEYS[6], 'data')
  if not data then return nil end
  local job = cjson.decode(data)
  if type(job.batch) ~= 'table' then job.batch = {} end
  if #job.batch + 1 ~= carried then return nil end
  return {group = group, g = g, now = now, window = window, job = job, room = room, units = {}, wake = tonumber(horizon) or 0}
end
local hand = open_hand_on()
-- A URL of the hand-on's group goes to the job, on the group's next slot (as a release's slot_lag puts it).
local function hand_on(id, url)
  local g, now = hand.g, hand.now
  local slot = math.max(hand.wake, now, g.tat - g.tau)
  hand.wake = slot + g.interval
  local unit = {id = id, url = url, depth = depth}
  if tonumber(ARGV[12]) ~= 0 then unit.priority = tonumber(ARGV[12]) end
  if slot > now then
    unit.due = math.floor(slot)
    local lag = math.min(g.lag, hand.window / 2)
    if lag >= 1 then unit.lag = math.floor(lag) end
  end
  hand.units[#hand.units + 1] = unit
  hand.job.batch[#hand.job.batch + 1] = unit
end
-- URLs over the page cap that their group's budget would still take, per
-- group: the answer OverPageLimit means "admissible with more pages", which a
-- shard asks its grant for, so it must not count a page its group cannot use.
local wouldTake = {}
for at = FIRST, #ARGV, 4 do
  local fp, group = ARGV[at], ARGV[at + 2]
  local over = nil
  if maxPerGroup > 0 and tonumber(redis.call('HGET', KEYS[3], group) or '0') + (wouldTake[group] or 0) >= maxPerGroup then
    over = -2
  elseif cap and admitted >= cap then
    over = -1
  end
  local code
  if over then
    -- A URL seen before is a duplicate, whatever the budgets say.
    if seen_has_many(s, {fp})[1] then
      code = 0
    else
      code = over
      if over == -1 then wouldTake[group] = (wouldTake[group] or 0) + 1 end
    end
  elseif not seen_add_many(s, {fp}, '')[1] then
    -- Within the budgets, the insert is the check: one command per URL, not two.
    code = 0
  else
    admitted = admitted + 1
    new = new + 1
    if maxPerGroup > 0 then redis.call('HINCRBY', KEYS[3], group, 1) end
    if hand and group == hand.group and #hand.units < hand.room then
      hand_on(ARGV[at + 1], ARGV[at + 3])
    else
      backlog_push(prefix, group, bucket, backlog_entry(ARGV[at + 1], ARGV[at + 3], 0), now_ms)
      pushed = pushed + 1
    end
    code = 1
  end
  result[#result + 1] = code
end
seen_save(s)
if pushed > 0 then redis.call('INCRBY', KEYS[4], pushed) end
if new > 0 then redis.call('INCRBY', KEYS[2], new) end
if hand and #hand.units > 0 then
  redis.call('HSET', KEYS[6], 'data', cjson.encode(hand.job))
  redis.call('HSET', prefix .. 'at', hand.group, fmt(hand.wake))
  result[#result + 1] = cjson.encode(hand.units)
else
  result[#result + 1] = ''
end
return result
