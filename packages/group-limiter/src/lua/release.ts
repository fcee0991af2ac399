import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Ends a lease (idempotent) and applies the response outcome: 429/503 with Retry-After
 * pause the group; 429 without it pauses exponentially by consecutive strikes; any other
 * status resets the strikes. Responses to requests that started before the last strike
 * belong to the same episode (they were in flight together) and neither add nor reset strikes.
 * Its KEYS, ARGV and reply: `lua/release.lua`.
 */
export const releaseScript = defineLuaScript({
  name: 'release',
  keys: 3,
  file: LIMITER_LUA.file('lua/release.lua'),
});
