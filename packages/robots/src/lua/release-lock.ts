import { defineLuaScript } from '@crawlq/redis';

/**
 * Deletes the fetch lock only if it still holds our token, so a worker whose
 * lock expired (slow fetch) cannot delete the lock a newer fetcher holds.
 * KEYS: 1 lock key. ARGV: 1 token. Reply: 1 deleted, 0 not ours.
 */
export const releaseLockScript = defineLuaScript<number>({
  name: 'robots-release-lock',
  keys: 1,
  lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`,
});
