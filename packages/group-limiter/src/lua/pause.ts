import { ARGS_INCLUDE, CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { luaPolicyCheck } from './limiter-lua.js';
import { ScriptCode } from './script-code.js';

/**
 * Admin pause: sets pausedUntil = now + min(forMs, maxPauseMs), replacing any current pause.
 * KEYS: 1 policy hash, 2 group hash, 3 groups set
 * ARGV: 1 policy version, 2 group, 3 forMs, 4 reason, 5 maxPauseMs
 * Reply: {Ok, pausedForMs} | {StalePolicy, version}
 */
export const pauseScript = defineLuaScript({
  name: 'pause',
  keys: 3,
  includes: [CLOCK_INCLUDE, ARGS_INCLUDE],
  lua: `${luaPolicyCheck(ScriptCode.StalePolicy)}
local now = now_ms()
local ms = math.min(math.max(tonumber(ARGV[3]), 0), tonumber(ARGV[5]))
redis.call('HSET', KEYS[2], 'pausedUntil', fmt(now + ms), 'pauseReason', ARGV[4])
redis.call('SADD', KEYS[3], ARGV[2])
return {${ScriptCode.Ok}, math.ceil(ms)}
`,
});
