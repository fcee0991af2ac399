import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/** Number of reply elements per group in `readStatusScript`. */
export const STATUS_FIELDS = 17;

/**
 * Read-only snapshot of groups on the Redis clock.
 * Its KEYS, ARGV and reply: `lua/read-status.lua`.
 */
export const readStatusScript = defineLuaScript({
  name: 'read-status',
  keys: 'variadic',
  file: LIMITER_LUA.file('lua/read-status.lua'),
});
