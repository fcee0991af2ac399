import { ARGS_INCLUDE, CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { luaPolicyCheck } from './limiter-lua.js';
import { ScriptCode } from './script-code.js';

/**
 * Ends a lease (idempotent) and applies the response outcome: 429/503 with Retry-After
 * pause the group; 429 without it pauses exponentially by consecutive strikes; any other
 * status resets the strikes. Responses to requests that started before the last strike
 * belong to the same episode (they were in flight together) and neither add nor reset strikes.
 * KEYS: 1 policy hash, 2 group hash, 3 lease zset
 * A lease given back unused because its start came too late (ARGV 9 = '1') is
 * counted as a late start and leaves the hold-time average alone.
 * A lease whose request reached the socket (ARGV 10 = '1') is counted in `started`:
 * one admitted start per request a server saw, whatever the path (first request,
 * retry, redirect hop, robots.txt).
 * ARGV: 1 policy version, 2 lease id, 3 status ('' = none), 4 retryAfterMs ('' = none),
 *       5 leaseMs, 6 backoff base ms, 7 backoff max ms, 8 maxPauseMs, 9 '1' = abandoned,
 *       10 '1' = the request went out
 * Reply: {Ok} | {StalePolicy, version}
 */
export const releaseScript = defineLuaScript({
  name: 'release',
  keys: 3,
  includes: [CLOCK_INCLUDE, ARGS_INCLUDE],
  lua: `${luaPolicyCheck(ScriptCode.StalePolicy)}
local now = now_ms()
local lease_ms = tonumber(ARGV[5])
local started = nil
local abandoned = ARGV[9] == '1'
local score = redis.call('ZSCORE', KEYS[3], ARGV[2])
if abandoned then
  if score then redis.call('HINCRBY', KEYS[2], 'lateStarts', 1) end
  redis.call('ZREM', KEYS[3], ARGV[2])
  return {${ScriptCode.Ok}}
end
if ARGV[10] == '1' then redis.call('HINCRBY', KEYS[2], 'started', 1) end
if score then
  redis.call('ZREM', KEYS[3], ARGV[2])
  started = tonumber(score) - lease_ms
  local held = now - started
  if held >= 0 and held <= lease_ms then
    -- Moving average of how long a request holds its slot: spaces concurrency deferrals.
    local old = tonumber(redis.call('HGET', KEYS[2], 'holdMs'))
    if old then held = old * 0.8 + held * 0.2 end
    redis.call('HSET', KEYS[2], 'holdMs', fmt(held))
  end
end

local status = tonumber(ARGV[3])
if status == nil then return {${ScriptCode.Ok}} end
local h = redis.call('HMGET', KEYS[2], 'strikes', 'strikeAt', 'pausedUntil')
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
return {${ScriptCode.Ok}}
`,
});
