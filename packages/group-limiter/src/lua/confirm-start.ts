import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Re-checks a start reserved ahead, when its time has come: a 429 seen by
 * another worker while this one waited must stop it too, and the concurrency
 * cap must still hold now that the earlier reservations have started. A
 * denied start gives its lease back at once; a concurrency denial gets a wake
 * slot on the group's horizon like acquire's.
 * A start that also holds a slot of its server's concurrency cap (ARGV 9 > 0)
 * is checked there the same way: acquire counted the reservations starting
 * near, not this far one, so the cap must still hold now that it comes.
 * Its KEYS, ARGV and reply: `lua/confirm-start.lua`.
 */
export const confirmStartScript = defineLuaScript({
  name: 'confirm-start',
  keys: 4,
  file: LIMITER_LUA.file('lua/confirm-start.lua'),
});
