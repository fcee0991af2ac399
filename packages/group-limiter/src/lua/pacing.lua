--[[
  pacing (include):
  `take_wake_slot`, `effective_pacing`, `pace_factor` and `paced_limits`,
  shared by the limiter's scripts.
  Times come from the `clock` include and are stored with `fmt` (µs precision,
  so pacing does not drift through rounding).
]]
--- @include "@crawlq/redis/lua/args.lua"
-- A group's own minimum interval (robots.txt Crawl-delay), capped, only ever
-- slows it down: when it is the longer one it replaces the policy's interval,
-- without burst (starts at least that far apart, as Crawl-delay asks).
-- Denied jobs take distinct wake slots on the group's horizon (wakeAt), spaced by
-- step, so a backlog does not wake all at once and spin. Returns the slot.
local function take_wake_slot(group_key, wake_at, earliest, step)
  local wake = math.max(wake_at, earliest)
  redis.call('HSET', group_key, 'wakeAt', fmt(wake + step))
  redis.call('HINCRBY', group_key, 'deferred', 1)
  return wake
end
local function effective_pacing(interval, tau, min_interval, cap)
  local own = math.min(min_interval, cap)
  if own > interval then return own, 0 end
  return interval, tau
end
-- Adaptive pacing: the pace factor f stored at the last cut
-- ('pace', cut at 'cutAt') grows back by rise per second from then on, so
-- recovery needs no write and goes on while the group is idle. A group that
-- does not adapt (adaptive ~= '1') always runs at f = 1.
local function pace_factor(adaptive, stored, cut_at, now, floor, rise)
  if adaptive ~= '1' then return 1 end
  local p = tonumber(stored)
  if p == nil then return 1 end
  local f = p + rise * math.max(0, now - num(cut_at, now)) / 1000
  if f >= 1 then return 1 end
  return math.max(f, floor)
end
-- f < 1 stretches the interval between starts (and the burst tolerance with
-- it) and shrinks a concurrency cap, never below one request in flight: the
-- group only ever goes slower than its limits, Crawl-delay included.
local function paced_limits(interval, tau, conc, f)
  if f >= 1 then return interval, tau, conc end
  if conc > 0 then conc = math.max(1, math.floor(conc * f + 1e-9)) end
  return interval / f, tau / f, conc
end
