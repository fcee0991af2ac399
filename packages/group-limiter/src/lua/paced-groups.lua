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
  Defines PACED_D, PACED_KEYS, PACED_ARGS and paced_group(i, now): group
  i's state and limits, as paced_group_of (paced-group.lua) gives them.
]]
--- @include "paced-group.lua"
local PACED_D = tonumber(ARGV[2])
local PACED_KEYS = 2 + 2 * PACED_D
local PACED_ARGS = 6 + 5 * PACED_D
local function paced_group(i, now)
  local base = 6 + (i - 1) * 5
  local limits = {ARGV[base + 2], ARGV[base + 3], ARGV[base + 4], ARGV[base + 5], ARGV[4], ARGV[5], ARGV[6]}
  return paced_group_of(ARGV[base + 1], KEYS[2 + i], KEYS[2 + PACED_D + i], limits, now)
end
