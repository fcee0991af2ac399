import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Admission: pause, then concurrency (leases scored by expiry), then pacing (GCRA).
 * With a fleet-wide cap (ARGV 12 > 0) the start must also fit the crawl-wide
 * pacing in KEYS[5] (evenly spaced starts, no burst), checked in the same script:
 * a start admitted takes a slot from both; a denial by either moves neither
 * pacing, and takes its wake slot on the horizon of the limit that denied it, so
 * a global denial never delays the group's own backlog and vice versa.
 * Its KEYS, ARGV and reply: `lua/acquire.lua`.
 */
export const acquireScript = defineLuaScript({
  name: 'acquire',
  keys: 9,
  file: LIMITER_LUA.file('lua/acquire.lua'),
});
