import { ARGS_INCLUDE, CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { ScriptCode } from './script-code.js';

/** Number of reply elements per group in `readStatusScript`. */
export const STATUS_FIELDS = 11;

/**
 * Read-only snapshot of groups on the Redis clock.
 * KEYS: 1 policy hash, then pairs (group hash, lease zset)
 * Reply: {Ok, policy version, now, then per group: pausedUntil, pauseReason, strikes,
 *         admitted, deferred, lastAdmitAt, minInterval, lateStarts, slippedStarts, started, inFlight}
 */
export const readStatusScript = defineLuaScript({
  name: 'read-status',
  keys: 'variadic',
  includes: [CLOCK_INCLUDE, ARGS_INCLUDE],
  lua: `
local now = now_ms()
local out = {${ScriptCode.Ok}, redis.call('HGET', KEYS[1], 'version') or '0', fmt(now)}
for i = 2, #KEYS, 2 do
  local h = redis.call('HMGET', KEYS[i], 'pausedUntil', 'pauseReason', 'strikes', 'admitted', 'deferred', 'lastAdmitAt', 'minInterval', 'lateStarts', 'slippedStarts', 'started')
  for k = 1, 10 do out[#out + 1] = h[k] end
  out[#out + 1] = redis.call('ZCOUNT', KEYS[i + 1], '(' .. fmt(now), '+inf')
end
return out
`,
});
