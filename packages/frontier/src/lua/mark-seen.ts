import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Marks fingerprints seen (those already present keep their value).
 * Its KEYS, ARGV and reply: `lua/mark-seen.lua`.
 */
export const markSeenScript = defineLuaScript({
  name: 'seen-mark',
  keys: 1,
  file: FRONTIER_LUA.file('lua/mark-seen.lua'),
});
