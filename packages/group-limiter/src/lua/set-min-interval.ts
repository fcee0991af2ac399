import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Stores a group's own minimum interval between starts (0 clears it). The cap is
 * applied where it is used (acquire, runPaced, status), so a later policy change
 * takes effect. The next start is pushed to at least the last start plus the
 * (capped) interval, so the first start after a Crawl-delay arrives obeys it too.
 * Its KEYS, ARGV and reply: `lua/set-min-interval.lua`.
 */
export const setMinIntervalScript = defineLuaScript({
  name: 'set-min-interval',
  keys: 3,
  file: LIMITER_LUA.file('lua/set-min-interval.lua'),
});
