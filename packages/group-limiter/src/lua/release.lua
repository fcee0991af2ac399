--[[
  release:
  Ends a lease (idempotent) and applies the response outcome: 429/503 with Retry-After
  pause the group; 429 without it pauses exponentially by consecutive strikes; any other
  status resets the strikes. Responses to requests that started before the last strike
  belong to the same episode (they were in flight together) and neither add nor reset strikes.
  KEYS[1] policy hash (not read: see below)
  KEYS[2] group hash
  KEYS[3] lease zset
  A lease given back unused because its start came too late (ARGV 9 = '1') is
  counted as a late start and leaves the hold-time average alone.
  A lease whose request reached the socket (ARGV 10 = '1') is counted in `started`:
  one admitted start per request a server saw, whatever the path (first request,
  retry, redirect hop, robots.txt).

  Adaptive pacing (ARGV 13 = '1'): the latency to the response head
  feeds the group's moving average (`latency`) and its baseline (the lowest
  latency seen, as TCP Vegas keeps its base RTT: a request that met an idle
  server); a congestion signal cuts the pace factor, at most once per
  episode: only a request admitted after the last cut (`cutAt`) can cut again,
  so the failures of requests that were in flight together, on any number of
  workers, count once (TCP's once per round trip). Signals: 429; a 5xx other
  than 501 and 505; 408 or a timeout; a connection error (each halves it); a
  latency sample and average both over limit = max(tolerance * baseline,
  baseline + slack) (cut to limit / average of it, at least half). Latency still
  that high at the floor pace is the site's own, not ours: it becomes the
  baseline. The first release after the pace is back at 1 reports that once.

  ARGV[1] policy version
  ARGV[2] lease id
  ARGV[3] status ('' = none)
  ARGV[4] retryAfterMs ('' = none)
  ARGV[5] leaseMs
  ARGV[6] backoff base ms
  ARGV[7] backoff max ms
  ARGV[8] maxPauseMs
  ARGV[9] '1' = abandoned
  ARGV[10] '1' = the request went out
  ARGV[11] latency ms to the response head ('' = none)
  ARGV[12] failure without a response ('timeout' | 'network' | '')
  ARGV[13] '1' = the group adapts
  ARGV[14] adaptive floor
  ARGV[15] rise per second
  ARGV[16] latency tolerance
  ARGV[17] latency slack ms
  ARGV[18] admitted at (Redis ms, '' = take the lease's start)
  ARGV[19] the lease's start (Redis ms, '' or absent = read from its score; given, the lease is removed without being looked up first: a command less on every request)
  A release with nothing to report but the end of its request does not run
  this script: the caller removes its lease alone (see fold-releases.lua).
  No policy version check: the arguments a release takes from the policy
  (lease time, backoff, adaptive settings) may be one call old (the caller's
  next admission reloads a changed policy), and the check cost a command on
  every request.
  Reply: {Ok} | {Ok, 'down' | 'up', from, to, cause, reason}
  Codes: 1 Ok
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/redis/lua/args.lua"
--- @include "pacing.lua"
--- @include "leases.lua"
local now = now_ms()
local lease_ms = tonumber(ARGV[5])
local started = nil
if ARGV[9] == '1' then
  give_back_late(KEYS[2], KEYS[3], ARGV[2])
  return {1}
end
-- The lease's start: the caller's (ARGV 19), else read from its score.
local score = nil
local removed = false
local start_arg = tonumber(ARGV[19] or '')
if start_arg then
  removed = redis.call('ZREM', KEYS[3], ARGV[2]) == 1
  if removed then score = start_arg + lease_ms end
else
  score = redis.call('ZSCORE', KEYS[3], ARGV[2])
end
-- Read and written once each: this runs once per request.
local h = redis.call('HMGET', KEYS[2], 'strikes', 'strikeAt', 'pausedUntil', 'holdMs', 'started')
local fields = {}
if ARGV[10] == '1' then
  fields[#fields + 1] = 'started'
  fields[#fields + 1] = num(h[5], 0) + 1
end
if score then
  if not removed then redis.call('ZREM', KEYS[3], ARGV[2]) end
  started = tonumber(score) - lease_ms
  local held = now - started
  if held >= 0 and held <= lease_ms then
    -- Moving average of how long a request holds its slot: spaces concurrency deferrals.
    local old = tonumber(h[4])
    if old then held = old * 0.8 + held * 0.2 end
    fields[#fields + 1] = 'holdMs'
    fields[#fields + 1] = fmt(held)
  end
end
if #fields > 0 then redis.call('HSET', KEYS[2], unpack(fields)) end
local status = tonumber(ARGV[3])

local function congestion(latency, average, baseline, limit)
  local failure = ARGV[12]
  if status == 429 then return '429', 'HTTP 429' end
  if status ~= nil and status >= 500 and status <= 599 and status ~= 501 and status ~= 505 then return '5xx', 'HTTP ' .. status end
  if status == 408 then return 'timeout', 'HTTP 408' end
  if failure == 'timeout' then return 'timeout', 'timeout' end
  if failure == 'network' then return 'network', 'connection error' end
  if limit ~= nil and latency > limit and average > limit then
    return 'latency', string.format('latency %d ms over %d ms (baseline %d ms)', math.floor(average + 0.5), math.floor(limit + 0.5), math.floor(baseline + 0.5))
  end
  return nil, nil
end

local function adapt()
  local admitted_at = tonumber(ARGV[18]) or started
  if ARGV[13] ~= '1' or admitted_at == nil then return nil end
  local floor = tonumber(ARGV[14])
  local a = redis.call('HMGET', KEYS[2], 'pace', 'cutAt', 'latency', 'baseline', 'paceCause', 'paceReason')
  local latency = tonumber(ARGV[11])
  local average = tonumber(a[3])
  local baseline = tonumber(a[4])
  local limit = nil
  if latency ~= nil then
    -- 0.25: the weight of a new sample in the group's moving average.
    if average == nil then average = latency else average = average + (latency - average) * 0.25 end
    if baseline == nil or latency < baseline then baseline = latency end
    limit = math.max(baseline * tonumber(ARGV[16]), baseline + tonumber(ARGV[17]))
    redis.call('HSET', KEYS[2], 'latency', fmt(average), 'baseline', fmt(baseline))
  end
  local f = pace_factor('1', a[1], a[2], now, floor, tonumber(ARGV[15]))
  local cause, reason = congestion(latency, average, baseline, limit)
  if cause ~= nil then
    if admitted_at < num(a[2], -1) then return nil end
    -- An error halves the pace; latency cuts by how far it is over the limit
    -- (limit / average, between half and 0.9), so a pace just over the edge
    -- is trimmed rather than halved (a gradient, as Vegas and Netflix's
    -- concurrency limiters do).
    local factor = 0.5
    if cause == 'latency' then factor = math.max(0.5, math.min(0.9, limit / average)) end
    local to = math.max(floor, f * factor)
    -- At the floor already (within 1%): nothing left to cut.
    local at_floor = to > f * 0.99
    if cause == 'latency' and at_floor then
      redis.call('HSET', KEYS[2], 'baseline', fmt(average))
      return nil
    end
    -- Even at the floor an error restarts the episode and the climb back.
    redis.call('HSET', KEYS[2], 'pace', fmt(to), 'cutAt', fmt(now), 'paceCause', cause, 'paceReason', reason)
    if at_floor then return nil end
    redis.call('HSET', KEYS[2], 'paceChangedAt', fmt(now))
    redis.call('HINCRBY', KEYS[2], 'paceCuts', 1)
    return {'down', fmt(f), fmt(to), cause, reason}
  end
  if f >= 1 and a[1] then
    redis.call('HDEL', KEYS[2], 'pace')
    redis.call('HSET', KEYS[2], 'paceChangedAt', fmt(now), 'paceCause', 'recovered', 'paceReason', 'recovered after ' .. (a[6] or 'a cut'))
    return {'up', a[1], '1', a[5] or '', a[6] or ''}
  end
  return nil
end
local change = adapt()
local function reply()
  if change == nil then return {1} end
  return {1, change[1], change[2], change[3], change[4], change[5]}
end

if status == nil then return reply() end
local strikes = num(h[1], 0)
local same_episode = started ~= nil and started < num(h[2], 0)
local paused_until = num(h[3], 0)

if status == 429 or status == 503 then
  if status == 429 and (strikes == 0 or not same_episode) then
    strikes = strikes + 1
    redis.call('HSET', KEYS[2], 'strikes', strikes, 'strikeAt', fmt(now))
  end
  local retry_after = tonumber(ARGV[4])
  local max_pause = tonumber(ARGV[8])
  local pause_ms = 0
  local reason = ''
  if retry_after ~= nil then
    pause_ms = math.min(math.max(retry_after, 0), max_pause)
    reason = 'Retry-After on ' .. status
  elseif status == 429 then
    pause_ms = math.min(tonumber(ARGV[6]) * 2 ^ (strikes - 1), tonumber(ARGV[7]), max_pause)
    reason = '429 backoff, strike ' .. strikes
  end
  if pause_ms > 0 and now + pause_ms > paused_until then
    redis.call('HSET', KEYS[2], 'pausedUntil', fmt(now + pause_ms), 'pauseReason', reason)
  end
elseif strikes > 0 and not same_episode then
  redis.call('HSET', KEYS[2], 'strikes', 0)
end
return reply()
