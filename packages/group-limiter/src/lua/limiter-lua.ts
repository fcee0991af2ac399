import { ARGS_INCLUDE, luaInclude } from '@crawlq/redis';

/**
 * The lease set's upkeep, shared by the scripts that change a lease:
 * `keep_leases(key, now)` keeps the set until its latest lease expires (a
 * lease scored later must not outlive its key; a server's lease set),
 * `extend_leases(key, lease_end, kept_to, now, lease_ms)` does the same for a
 * group's set at a cost of nothing on most admissions: the group's
 * `leasesKeptTo` field says until when the set is kept, and only a lease
 * ending past it extends the set, by a whole lease period more (one PEXPIRE
 * a minute for a busy group, where every admission made two commands). It
 * returns the new time to record, or nil. A set whose leases were all given
 * back is deleted by Redis and comes back without an expiry, which only keeps
 * it longer (until its next extension: acquire renews it every 32nd
 * admission). No script may give a group's set an expiry shorter than its
 * field: that would drop leases the field says are kept. And
 * `give_back_late(group_key, leases_key, lease_id)` gives back a start that
 * came too late to be used, counted in `lateStarts` once, if it was held.
 */
export const LEASES_INCLUDE = luaInclude(
  'leases',
  `
local function keep_leases(key, now)
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.ceil(tonumber(latest[2]) - now) + 1000)
end
local function extend_leases(key, lease_end, kept_to, now, lease_ms)
  if lease_end + 1000 <= kept_to then return nil end
  local to = lease_end + lease_ms + 1000
  redis.call('PEXPIRE', key, math.ceil(to - now))
  return to
end
local function give_back_late(group_key, leases_key, lease_id)
  if redis.call('ZREM', leases_key, lease_id) == 1 then redis.call('HINCRBY', group_key, 'lateStarts', 1) end
end
`,
);

/**
 * `take_wake_slot`, `effective_pacing`, `pace_factor` and `paced_limits`,
 * shared by the limiter's scripts.
 * Times come from the `clock` include and are stored with `fmt` (µs precision,
 * so pacing does not drift through rounding).
 */
export const PACING_INCLUDE = luaInclude(
  'pacing',
  `
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
`,
  [ARGS_INCLUDE],
);

/** Lua that answers StalePolicy unless KEYS[1] (policy hash) holds version ARGV[1]. */
export function luaPolicyCheck(staleCode: number): string {
  return `
local stored_version = redis.call('HGET', KEYS[1], 'version') or '0'
if stored_version ~= ARGV[1] then return {${staleCode}, stored_version} end
`;
}

/**
 * The layout of a script another package runs through `GroupLimiter.runPaced`
 * (the frontier's release step): it paces groups with the limiter's own state
 * and arithmetic, so a job leaves the backlog no sooner than the gate would
 * admit it.
 * KEYS: 1 policy hash, 2 groups set, 2+i group hash, 2+D+i leases (i = 1..D),
 *       then the caller's keys from PACED_KEYS + 1
 * ARGV: 1 policy version, 2 D, 3 minimum step ms (not read here), 4 maxMinIntervalMs, 5 adaptive floor,
 *       6 adaptive rise per second, then D quintuples (group, interval, tolerance,
 *       '1' = adapts, concurrency cap or 0), then the caller's arguments from PACED_ARGS + 1
 * Defines PACED_D, PACED_KEYS, PACED_ARGS and paced_group(i, now):
 * the group's name, keys, current interval, tolerance and cap (Crawl-delay and
 * adaptive pace applied), whether it adapts its pace, tat, wakeAt, pausedUntil, hold (the mean time a
 * request holds its slot, 0 before the first release), lag (how far its
 * starts run behind the release step's slots, as admissions last saw it) and
 * listed (admitted before, so already in the groups set).
 */
export const PACED_GROUPS_INCLUDE = luaInclude(
  'paced-groups',
  `
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
`,
  [PACING_INCLUDE],
);
