--[[
  paced-groups (include):
  The layout of a script another package runs through `GroupLimiter.runPaced`
  (the frontier's release step): it paces groups with the limiter's own state
  and arithmetic, so a job leaves the backlog no sooner than the gate would
  admit it.
  KEYS[1] policy hash
  KEYS[2] groups set
  KEYS[2+i] group i's hash (i = 1..D)
  KEYS[2+D+i] group i's lease zset
  KEYS[PACED_KEYS+1..] the caller's keys
  ARGV[1] policy version
  ARGV[2] D, the number of groups
  ARGV[3] minimum step ms (not read here)
  ARGV[4] maxMinIntervalMs
  ARGV[5] adaptive floor
  ARGV[6] adaptive rise per second
  ARGV[6+5(i-1)+1..5] group i: name, interval, tolerance, '1' = adapts, concurrency cap or 0
  ARGV[PACED_ARGS+1..] the caller's arguments
  Defines PACED_D, PACED_KEYS, PACED_ARGS and paced_group(i, now):
  the group's name, keys, current interval, tolerance and cap (Crawl-delay and
  adaptive pace applied), whether it adapts its pace, tat, wakeAt, pausedUntil, hold (the mean time a
  request holds its slot, 0 before the first release), lag (how far its
  starts run behind the release step's slots, as admissions last saw it) and
  listed (admitted before, so already in the groups set).
]]
--- @include "pacing.lua"
local PACED_D = tonumber(ARGV[2])
local PACED_KEYS = 2 + 2 * PACED_D
local PACED_ARGS = 6 + 5 * PACED_D
local function paced_group(i, now)
  local base = 6 + (i - 1) * 5
  local key = KEYS[2 + i]
  local h = redis.call('HMGET', key, 'tat', 'wakeAt', 'pausedUntil', 'minInterval', 'pace', 'cutAt', 'holdMs', 'lagMs', 'admitted')
  local interval, tau = effective_pacing(tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), num(h[4], 0), tonumber(ARGV[4]))
  local f = pace_factor(ARGV[base + 4], h[5], h[6], now, tonumber(ARGV[5]), tonumber(ARGV[6]))
  local conc
  interval, tau, conc = paced_limits(interval, tau, tonumber(ARGV[base + 5]), f)
  return {
    name = ARGV[base + 1], key = key, leases = KEYS[2 + PACED_D + i],
    interval = interval, tau = tau, conc = conc, adaptive = ARGV[base + 4] == '1',
    tat = num(h[1], 0), wake_at = num(h[2], 0), paused_until = num(h[3], 0),
    hold = num(h[7], 0), lag = num(h[8], 0),
    -- Admitted before: listed in the groups set already (acquire lists a group at its first admission).
    listed = h[9] ~= false,
  }
end
