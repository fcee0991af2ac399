--[[
  acquire:
  Admission: pause, then concurrency (leases scored by expiry), then pacing (GCRA).
  With a fleet-wide cap (ARGV 12 > 0) the start must also fit the crawl-wide
  pacing in KEYS[5] (evenly spaced starts, no burst), checked in the same script:
  a start admitted takes a slot from both; a denial by either moves neither
  pacing, and takes its wake slot on the horizon of the limit that denied it, so
  a global denial never delays the group's own backlog and vice versa.
  KEYS[1] policy hash
  KEYS[2] group hash
  KEYS[3] lease zset
  KEYS[4] groups set
  KEYS[5] global hash
  KEYS[6] the asking job's hash (progress mark; KEYS[2] again when there is none)
  KEYS[7..9] the server level's (see server-gate.lua; KEYS[2] again when there is no server)
  The cap counts the leases whose start is less than ARGV 11 away (`near`) or
  past. A start reserved further ahead does not hold a slot while it waits, and
  confirm-start checks the cap again when its time comes (the reply asks for
  that). A nearer one is checked here, once: from now on every check counts it.
  ARGV[1] policy version
  ARGV[2] group
  ARGV[3] lease id
  ARGV[4] maxInlineWaitMs
  ARGV[5] interval T' (0 = no rate)
  ARGV[6] tolerance tau
  ARGV[7] concurrency (0 = unlimited)
  ARGV[8] leaseMs
  ARGV[9] minimum deferral step ms
  ARGV[10] maxMinIntervalMs (cap of the group's own minimum interval)
  ARGV[11] near ms: a start at least this far ahead is re-checked (pause, cap) when it comes
  ARGV[12] global interval (0 = no fleet-wide cap)
  ARGV[13] '1' = the group adapts its pace
  ARGV[14] adaptive floor
  ARGV[15] adaptive rise per second
  ARGV[16] the start slot the release step gave the job ('' = none): sets the group's `lagMs`
  ARGV[17] the job's progress ('' = none): written to KEYS[6] if that job still exists, whatever the answer, so a job of several URLs records each one it moves on to in the same round trip
  ARGV[18..20] the server level's (see server-gate.lua)
  ARGV[21] grace ms ('' or 0 = none): the caller's starts have lately run this late (a busy event loop); a start that keeps spacing (the group's rate, no crawl-wide cap) moves the group's pacing, and its server's, back by that much more, at most a quarter of either's interval, so it may go that late without a retake's round trip
  ARGV[22..25] what the caller's own releases of the group left to write (see release.lua: a release with nothing else to
           report only removes its lease): the hold-time samples folded as decay and addend (new = old * decay + addend;
           the last sample alone when the group has no hold time yet), and the requests that went out ('' = none)
  An adapting group's limits (the longer of its interval and minimum interval,
  its concurrency cap) are scaled by its pace factor (see `paced_limits`).
  Reply: {Ok, startInMs, startAt (string), now (string), confirm (1 = call confirm-start), interval (string: the group's spacing
         in force, Crawl-delay and adaptive pace applied; 0 = none), grace (string: the grace taken, ms),
         next start (string: the earliest the group's next start can be, its burst allowed for; 0 = no spacing),
         release flags (1: the group has 429 strikes a release must reset; 2: it has no hold time yet, which the
         release step needs to plan its jobs: either way the caller's releases of it run the script)}
         | {Denied*, wakeInMs, pausedForMs, stepMs (string)} | {StalePolicy, version}
  Codes: 0 StalePolicy, 1 Ok, 2 DeniedRate, 3 DeniedConcurrency, 4 DeniedPaused, 6 DeniedGlobalRate
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "pacing.lua"
--- @include "leases.lua"
--- @include "fold-releases.lua"
--- @include "server-gate.lua"
--- @include "policy-check.lua"
-- Written only into a job that still exists: a write that made a new hash holding nothing else
-- (the job was removed meanwhile) is taken back. One command per URL where EXISTS first made two.
if ARGV[17] ~= '' and redis.call('HSET', KEYS[6], 'progress', ARGV[17]) == 1 and redis.call('HLEN', KEYS[6]) == 1 then redis.call('DEL', KEYS[6]) end
local now = now_ms()
local max_inline = tonumber(ARGV[4])
local interval = tonumber(ARGV[5])
local tau = tonumber(ARGV[6])
local conc = tonumber(ARGV[7])
local lease_ms = tonumber(ARGV[8])
local min_step = tonumber(ARGV[9])
local h = redis.call('HMGET', KEYS[2], 'tat', 'wakeAt', 'pausedUntil', 'holdMs', 'minInterval', 'pace', 'cutAt', 'lagMs', 'admitted', 'leasesKeptTo', 'started', 'strikes', 'soloAt', 'stat')
local tat = num(h[1], 0)
local wake_at = num(h[2], 0)
local paused_until = num(h[3], 0)
local hold_ms = num(h[4], 0)
-- The caller's releases since its last admission of the group, written with it (admitted only: a denial leaves them to the caller).
local released = fold_releases(h[4], h[11], ARGV[22], ARGV[23], ARGV[24], ARGV[25])
if released and released[4] then hold_ms = tonumber(released[4]) end
interval, tau = effective_pacing(interval, tau, num(h[5], 0), tonumber(ARGV[10]))
local f = pace_factor(ARGV[13], h[6], h[7], now, tonumber(ARGV[14]), tonumber(ARGV[15]))
interval, tau, conc = paced_limits(interval, tau, conc, f)
local admitted = num(h[9], 0)
-- Listed once: a group admitted before is in the set (both are written here, and deleted together).
if not h[9] then redis.call('SADD', KEYS[4], ARGV[2]) end

-- How long one more start takes to become possible: the emission interval, or for a
-- concurrency-bound group the mean lease hold time divided by the slots.
local conc_step = min_step
if conc > 0 and hold_ms > 0 then conc_step = math.max(min_step, hold_ms / conc) end
local step = interval
if conc > 0 and hold_ms > 0 then step = math.max(step, hold_ms / conc) end
if step <= 0 then step = min_step end

local function deny(code, earliest)
  local wake = take_wake_slot(KEYS[2], wake_at, math.max(earliest, now), step)
  return {code, math.ceil(wake - now), math.max(0, math.ceil(paused_until - now)), fmt(step)}
end

if paused_until > now then return deny(4, paused_until) end

local allow_at = now
if interval > 0 then allow_at = tat - tau end

-- Expired leases belong to crashed or stuck workers: their slots come back at
-- once (no count includes them), and every 32nd admission of the group drops
-- them (this runs once per request: every command counts).
-- The same beat renews the lease set's expiry (see extend_leases), so a set
-- that emptied and came back without one gets it again.
local kept_to = num(h[10], 0)
if admitted % 32 == 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', fmt(now))
  kept_to = 0
end
-- Counted against the cap: leases started, or starting within `near`. This
-- start, if near, counts from now on with them: checked here, it needs no
-- second round trip when it comes.
local near = tonumber(ARGV[11])
-- (A lease asked for again is not counted against itself; looked up only at the cap.)
if conc > 0 and redis.call('ZCOUNT', KEYS[3], '(' .. fmt(now), fmt(now + lease_ms + near)) >= conc and not redis.call('ZSCORE', KEYS[3], ARGV[3]) then
  return deny(3, math.max(allow_at, now + conc_step))
end

local wait = allow_at - now
if wait > max_inline then return deny(2, allow_at) end
-- A short wait is reserved now: the caller sleeps and starts at allow_at.
local start = math.max(now, allow_at)
local server_denial
start, server_denial = server_check(now, start, {h[13], h[14]})
if server_denial then return server_denial end

local global_interval = tonumber(ARGV[12])
if global_interval > 0 then
  local g = redis.call('HMGET', KEYS[5], 'tat', 'wakeAt')
  local global_at = math.max(now, num(g[1], 0))
  if global_at - now > max_inline then
    local wake = take_wake_slot(KEYS[5], num(g[2], 0), global_at, global_interval)
    return {6, math.ceil(wake - now), 0, fmt(global_interval)}
  end
  -- Crawl-wide starts are reserved in order, each one interval after the last,
  -- so a start the group holds back leaves the cap's slots before it unused:
  -- when that would waste more than one of them, the job waits for its group's
  -- slot instead (a group denial: the crawl-wide pacing does not move).
  if start - global_at > global_interval then return deny(2, allow_at) end
  start = math.max(start, global_at)
  redis.call('HSET', KEYS[5], 'tat', fmt(start + global_interval))
  redis.call('HINCRBY', KEYS[5], 'admitted', 1)
end
-- A grace only where starts keep a spacing the lateness could crowd: the
-- group's own rate (a crawl-wide cap takes late starts back instead), a
-- quarter of it at most (and of its server's), so a busy process slows its
-- groups by that much at most and never speeds one up.
local grace = 0
if interval > 0 and global_interval <= 0 then
  grace = math.min(tonumber(ARGV[21]) or 0, interval / 4)
  if SERVER.name ~= '' and SERVER.interval > 0 then grace = math.min(grace, SERVER.interval / 4) end
  grace = math.max(0, grace)
end
local server_fields = server_take(start, now, grace, admitted + 1)
redis.call('ZADD', KEYS[3], fmt(start + lease_ms), ARGV[3])
-- The group's fields change in one write (every command counts: this runs once per request).
local fields = {'admitted', admitted + 1, 'lastAdmitAt', fmt(start)}
if released then for _, v in ipairs(released) do fields[#fields + 1] = v end end
for _, v in ipairs(server_fields) do fields[#fields + 1] = v end
local extended_to = extend_leases(KEYS[3], start + lease_ms, kept_to, now, lease_ms)
if extended_to then
  fields[#fields + 1] = 'leasesKeptTo'
  fields[#fields + 1] = fmt(extended_to)
end
-- The earliest the group's next start can be (0: no spacing), for a caller with more to start.
local next_start = 0
if interval > 0 then
  local next_tat = math.max(tat, start) + interval + grace
  fields[#fields + 1] = 'tat'
  fields[#fields + 1] = fmt(next_tat)
  next_start = next_tat - tau
end
-- A job the release step gave a slot: how far the group's starts run behind
-- those slots (late starts push them), for the next releases. A start reserved
-- ahead shows it exactly; one let go at once only bounds it.
local slot = tonumber(ARGV[16])
if slot then
  local lag = num(h[8], 0)
  if start > now then lag = math.max(0, start - slot) else lag = math.max(0, math.min(lag, now - slot)) end
  fields[#fields + 1] = 'lagMs'
  fields[#fields + 1] = fmt(lag)
end
redis.call('HSET', KEYS[2], unpack(fields))
-- A start reserved further ahead (the crawl-wide cap may have pushed it there)
-- is checked again when it comes, for a pause and against the cap.
local confirm = 0
if start - now >= near then confirm = 1 end
local release_flags = 0
if num(h[12], 0) > 0 then release_flags = release_flags + 1 end
if hold_ms <= 0 then release_flags = release_flags + 2 end
-- The group's spacing in force (0: none), so the caller knows whether a late start could crowd the next.
return {1, math.ceil(start - now), fmt(start), fmt(now), confirm, fmt(interval), fmt(grace), fmt(next_start), release_flags}
