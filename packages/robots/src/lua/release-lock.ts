import { defineLuaScript } from '@crawlq/redis';
import { ROBOTS_LUA } from './files.js';

/**
 * Deletes the fetch lock only if it still holds our token, so a worker whose
 * lock expired (slow fetch) cannot delete the lock a newer fetcher holds.
 * Its KEYS, ARGV and reply: `lua/release-lock.lua`.
 */
export const releaseLockScript = defineLuaScript<number>({
  name: 'robots-release-lock',
  keys: 1,
  file: ROBOTS_LUA.file('lua/release-lock.lua'),
});
