import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Read-only membership test.
 * Its KEYS, ARGV and reply: `lua/check-seen.lua`.
 */
export const checkSeenScript = defineLuaScript({
  name: 'seen-check',
  keys: 1,
  file: FRONTIER_LUA.file('lua/check-seen.lua'),
});
