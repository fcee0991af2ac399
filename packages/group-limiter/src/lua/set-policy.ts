import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Stores the policy JSON unless identical, bumping an opaque version `seq:nonce`
 * (the nonce keeps versions unique even if the keys were wiped and seq restarted).
 * Its KEYS, ARGV and reply: `lua/set-policy.lua`.
 */
export const setPolicyScript = defineLuaScript({
  name: 'set-policy',
  keys: 1,
  file: LIMITER_LUA.file('lua/set-policy.lua'),
});
