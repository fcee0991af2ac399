import { CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { luaPolicyCheck, PACING_INCLUDE } from './limiter-lua.js';
import { ScriptCode } from './script-code.js';

/**
 * Reserves distinct future slots on each group's wake horizon for a batch of jobs
 * about to be enqueued. Groups without a rate limit get 0 unless paused.
 * With a batch window W > 0 a job becomes due at the start of its slot's bucket
 * (buckets of min(W, batchJobs * step) on the Redis clock, never before the group
 * may start again), up to a bucket early: one wake-up then releases several jobs
 * and the gate's short in-process wait spaces them exactly.
 * KEYS: 1 policy hash, 2 groups set, 3.. one group hash per distinct group
 * ARGV: 1 policy version, 2 number of distinct groups D, 3 minimum step ms, 4 maxMinIntervalMs,
 *       5 batch window W (0 = exact slots), 6 jobs per batch at most, 7 adaptive floor, 8 adaptive rise per second,
 *       then D quadruples (group, interval T', tolerance tau, '1' = adapts), then one 1-based group index per item
 * Reply: {Ok, delayMs per item...} | {StalePolicy, version}
 */
export const planScript = defineLuaScript({
  name: 'plan',
  keys: 'variadic',
  includes: [CLOCK_INCLUDE, PACING_INCLUDE],
  lua: `${luaPolicyCheck(ScriptCode.StalePolicy)}
local now = now_ms()
local d = tonumber(ARGV[2])
local min_step = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])
local batch_window = tonumber(ARGV[5])
local batch_jobs = tonumber(ARGV[6])
local floor = tonumber(ARGV[7])
local rise = tonumber(ARGV[8])
local groups = {}
for i = 1, d do
  local base = 8 + (i - 1) * 4
  local h = redis.call('HMGET', KEYS[2 + i], 'tat', 'wakeAt', 'pausedUntil', 'minInterval', 'pace', 'cutAt')
  local interval, tau = effective_pacing(tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), num(h[4], 0), cap)
  interval, tau = paced_limits(interval, tau, 0, pace_factor(ARGV[base + 4], h[5], h[6], now, floor, rise))
  groups[i] = {
    interval = interval,
    tau = tau,
    tat = num(h[1], 0),
    wake_at = num(h[2], 0),
    paused_until = num(h[3], 0),
    touched = false,
  }
  redis.call('SADD', KEYS[2], ARGV[base + 1])
end
local out = {${ScriptCode.Ok}}
for j = 9 + 4 * d, #ARGV do
  local g = groups[tonumber(ARGV[j])]
  local delay = 0
  if g.interval > 0 or g.paused_until > now then
    local earliest = math.max(now, g.paused_until)
    if g.interval > 0 then earliest = math.max(earliest, g.tat - g.tau) end
    local slot = math.max(g.wake_at, earliest)
    local step = g.interval
    if step <= 0 then step = min_step end
    g.wake_at = slot + step
    g.touched = true
    local due = slot
    if batch_window > 0 then
      local bucket = math.min(batch_window, batch_jobs * step)
      due = math.max(math.floor(slot / bucket) * bucket, earliest)
    end
    delay = math.max(0, math.ceil(due - now))
  end
  out[#out + 1] = delay
end
for i = 1, d do
  if groups[i].touched then redis.call('HSET', KEYS[2 + i], 'wakeAt', fmt(groups[i].wake_at)) end
end
return out
`,
});
