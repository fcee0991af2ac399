import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Stage two of the frontier: moves URLs from their groups' backlogs into the
 * crawl queue as BullMQ jobs, each in the same atomic step as its pop, only
 * when its group can use it now:
 * - a rate-limited group gets a job only when its next start slot (the
 *   gate's own arithmetic: its pacing state, Crawl-delay and adaptive pace
 *   included, on a release horizon of the backlog's own, `P at`) is within
 *   `window`; each release takes the slot;
 * - a group's first job runs alone (slow start: more follow once it is done);
 *   after that a group has at most cap - in flight jobs waiting in the queue (at least
 *   one for a group without a rate) (cap: its concurrency cap, or `defaultCap`; never more than `maxReady`:
 *   a group that may run thousands at once still gets them a few at a time,
 *   a release every few milliseconds); a group its rate holds back (short
 *   requests) every slot of the window, each job with its slot (`due`); a paused group one, a scout
 *   the gate defers, which keeps the group's wait on record and its
 *   --max-blocked bound running;
 * - the queue holds at most `readyTarget` waiting jobs, and one call releases
 *   at most `room`.
 * So a job that exists is due, and groups take turns: each release moves a
 * group behind those waiting longer (the groups set is ordered by next release).
 *
 * Runs through GroupLimiter.runPaced: KEYS and ARGV start with its layout
 * (the limiter's `lua/paced-groups.lua`), then the release step's own.
 * Its KEYS, ARGV and reply: `lua/release.lua`.
 */
export const releaseScript = defineLuaScript({
  name: 'frontier-release',
  keys: 'variadic',
  file: FRONTIER_LUA.file('lua/release.lua'),
});
