import { LUA_PRELUDE, luaScript } from './lua-script.js';
import { ScriptCode } from './script-code.js';

/**
 * Re-checks a pause just before a reserved start that was some way off: a 429
 * seen by another worker while this one slept must stop this start too. A
 * paused group gives the lease back at once.
 * KEYS: 1 group hash, 2 leases zset
 * ARGV: 1 lease id
 * Reply: {Ok} or {DeniedPaused, pausedForMs}
 */
export const confirmStartScript = luaScript(
  'confirm-start',
  `${LUA_PRELUDE}
local now = now_ms()
local pausedUntil = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0')
if pausedUntil > now then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {${ScriptCode.DeniedPaused}, pausedUntil - now}
end
return {${ScriptCode.Ok}}
`,
);
