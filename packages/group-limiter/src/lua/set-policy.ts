import { defineLuaScript } from '@crawlq/redis';
import { ScriptCode } from './script-code.js';

/**
 * Stores the policy JSON unless identical, bumping an opaque version `seq:nonce`
 * (the nonce keeps versions unique even if the keys were wiped and seq restarted).
 * KEYS: 1 policy hash
 * ARGV: 1 policy JSON, 2 nonce
 * Reply: {Ok | Unchanged, previous JSON ('' = none), version}
 */
export const setPolicyScript = defineLuaScript({
  name: 'set-policy',
  keys: 1,
  lua: `
local current = redis.call('HMGET', KEYS[1], 'json', 'version')
if current[1] == ARGV[1] then return {${ScriptCode.Unchanged}, current[1], current[2]} end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local version = seq .. ':' .. ARGV[2]
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'version', version)
return {${ScriptCode.Ok}, current[1] or '', version}
`,
});
