import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from '../lua/files.js';

/**
 * Records a fetch of a URL and schedules its next one, atomically: the state
 * is written with a new generation and one wheel entry is added (any older
 * entry of the URL becomes stale). A retired URL's state is deleted.
 * Its KEYS, ARGV and reply: `revisit/revisit-record.lua`.
 */
export const revisitRecordScript = defineLuaScript({
  name: 'revisit-record',
  keys: 1,
  file: FRONTIER_LUA.file('revisit/revisit-record.lua'),
});

/**
 * Reads a URL's state for a fetch. Reply: {} when the URL is not known (a
 * first fetch), {its hint (hex)} when it is not known but has a hint (see
 * `R h:`); else {last fetch (ds), interval (f16), change age (f16),
 * signature (hex), generation, depth, flags, size code, changes (1/16),
 * unchanged time (f16), changed time (f16), validator bytes, archived
 * response (hex, '' none)}.
 * Its KEYS, ARGV and reply: `revisit/revisit-read.lua`.
 */
export const revisitReadScript = defineLuaScript({
  name: 'revisit-read',
  keys: 0,
  file: FRONTIER_LUA.file('revisit/revisit-read.lua'),
});

/**
 * Applies revisit hints (a sitemap's) to URLs, atomically per URL:
 * - a known URL whose hinted last change (ds, the caller has made a future
 *   one now) is newer than its last fetch, and that is not leased, becomes due
 *   at now, or once its minimum interval since that fetch has passed: its
 *   interval is shortened to that (rounded down unless the minimum binds, then
 *   up: never due before it) and a wheel entry added with a new generation;
 * - a URL with no state gets its prior interval stored in `R h:` for its
 *   first fetch (the caller passes one only for URLs it just admitted).
 * Its KEYS, ARGV and reply: `revisit/revisit-hint.lua`.
 */
export const revisitHintScript = defineLuaScript({
  name: 'revisit-hint',
  keys: 0,
  file: FRONTIER_LUA.file('revisit/revisit-hint.lua'),
});

/**
 * Takes due URLs off the wheel: each is leased (flagged, with a new
 * generation and a wheel entry at now + lease, so a process that dies before
 * the URL reaches its backlog loses nothing: it comes due again then) and
 * returned; stale entries are dropped, early ones move to a narrower slot.
 * Its KEYS, ARGV and reply: `revisit/revisit-pop.lua`.
 */
export const revisitPopScript = defineLuaScript({
  name: 'revisit-pop',
  keys: 2,
  file: FRONTIER_LUA.file('revisit/revisit-pop.lua'),
});

/**
 * Appends leased URLs to their groups' backlogs (stage one of the frontier),
 * as a redirect's target is: already seen, so no budget or dedupe applies.
 * Its KEYS, ARGV and reply: `revisit/revisit-push.lua`.
 */
export const revisitPushScript = defineLuaScript({
  name: 'revisit-push',
  keys: 1,
  file: FRONTIER_LUA.file('revisit/revisit-push.lua'),
});

/**
 * Wheel entries due by now and by now + horizon: one pass over the slots up
 * to the horizon (one LLEN each), inside Redis.
 * Its KEYS, ARGV and reply: `revisit/revisit-due.lua`.
 */
export const revisitDueScript = defineLuaScript({
  name: 'revisit-due',
  keys: 1,
  file: FRONTIER_LUA.file('revisit/revisit-due.lua'),
});

/**
 * Checks the schedule's invariant, each known URL has exactly one live wheel
 * entry (a finite due time, never two). Reads every list and bucket: for tests
 * and small crawls only.
 * Its KEYS, ARGV and reply: `revisit/revisit-audit.lua`.
 */
export const revisitAuditScript = defineLuaScript({
  name: 'revisit-audit',
  keys: 1,
  file: FRONTIER_LUA.file('revisit/revisit-audit.lua'),
});
