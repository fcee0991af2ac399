import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Hands a job's URLs it will not fetch back to the front of their group's
 * backlog (they were next), in one atomic step with the job's own change, so
 * each URL is in the backlog or in a job, never both, never neither:
 * its data becomes the one URL left to it, or its progress says every URL it
 * carried is handled (a retry of it then fetches nothing). Only while the
 * caller holds the job's lock: a job another worker took over is left alone.
 *
 * The URLs handed back give back their start slots too: a release took a slot
 * for each on the group's release horizon (`P at`) and set the group's score
 * after the last of them. Left there, a rate-limited group whose jobs fail at
 * their first URL (each then hands back the other 31) would get one URL
 * through per 32 slots, a crawl of hours for minutes of work; so the horizon
 * goes back to the earliest slot handed back (or now), and the group is due
 * again from then. The gate still paces every start: a slot given back that
 * another job of the group also holds only makes one of them wait at the gate.
 * Its KEYS, ARGV and reply: `lua/requeue.lua`.
 */
export const requeueScript = defineLuaScript({
  name: 'frontier-requeue',
  keys: 3,
  file: FRONTIER_LUA.file('lua/requeue.lua'),
});
