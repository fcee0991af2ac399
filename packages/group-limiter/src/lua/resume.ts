import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Ends a pause, forgets the 429 strikes and clears the wake horizon (it may lie far
 * beyond the old pause; new work should not queue behind it).
 * Its KEYS, ARGV and reply: `lua/resume.lua`.
 */
export const resumeScript = defineLuaScript({
  name: 'resume',
  keys: 1,
  file: LIMITER_LUA.file('lua/resume.lua'),
});
