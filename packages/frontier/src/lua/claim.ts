import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Marks one fingerprint seen in one atomic step and says whether it was new.
 * With an owner, a second claim by the same owner succeeds again (a job that
 * followed the same redirect before it was deferred or its worker died must
 * not lose the page). Exact mode keeps a digest of the owner as the entry's
 * value; bloom mode adds a second entry for the pair (owner, fingerprint), so a
 * false positive there errs towards fetching twice, never towards skipping.
 * Its KEYS, ARGV and reply: `lua/claim.lua`.
 */
export const claimScript = defineLuaScript({
  name: 'seen-claim',
  keys: 1,
  file: FRONTIER_LUA.file('lua/claim.lua'),
});
