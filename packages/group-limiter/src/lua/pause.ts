import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Admin pause: sets pausedUntil = now + min(forMs, maxPauseMs), replacing any current pause.
 * Its KEYS, ARGV and reply: `lua/pause.lua`.
 */
export const pauseScript = defineLuaScript({
  name: 'pause',
  keys: 3,
  file: LIMITER_LUA.file('lua/pause.lua'),
});
