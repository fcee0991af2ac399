--[[
  paced-group (include):
  `paced_group_of(name, key, leases, limits, now)`: one group's pacing state
  and limits as the gate's own arithmetic has them, for another package's
  script (the frontier's release step, a page's links handed to its job).
  `limits` is what `GroupLimiter.pacingOf` gives for the group: interval,
  tolerance, '1' = adapts, concurrency cap (0 = none), maxMinIntervalMs,
  adaptive floor, rise per second (strings or numbers). Returns the group's
  name, keys, current interval, tolerance and cap (Crawl-delay and adaptive
  pace applied), whether it adapts its pace, tat, wakeAt, pausedUntil, hold
  (the mean time a request holds its slot, 0 before the first release), lag
  (how far its starts run behind the release step's slots, as admissions
  last saw it) and listed (admitted before, so already in the groups set).
]]
--- @include "pacing.lua"
local function paced_group_of(name, key, leases, limits, now)
  local h = redis.call('HMGET', key, 'tat', 'wakeAt', 'pausedUntil', 'minInterval', 'pace', 'cutAt', 'holdMs', 'lagMs', 'admitted')
  local interval, tau = effective_pacing(tonumber(limits[1]), tonumber(limits[2]), num(h[4], 0), tonumber(limits[5]))
  local f = pace_factor(limits[3], h[5], h[6], now, tonumber(limits[6]), tonumber(limits[7]))
  local conc
  interval, tau, conc = paced_limits(interval, tau, tonumber(limits[4]), f)
  return {
    name = name, key = key, leases = leases,
    interval = interval, tau = tau, conc = conc, adaptive = limits[3] == '1',
    tat = num(h[1], 0), wake_at = num(h[2], 0), paused_until = num(h[3], 0),
    hold = num(h[7], 0), lag = num(h[8], 0),
    -- Admitted before: listed in the groups set already (acquire lists a group at its first admission).
    listed = h[9] ~= false,
  }
end
