import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Hands a job the URLs waiting in its own group's backlog, in one atomic step
 * with the job's data, where the release step would pack them into a job of
 * the group taking its slots in turn: the job fetches them next, on the
 * group's next slots, instead of their becoming a job of their own.
 * Runs through GroupLimiter.runPaced with the job's group alone.
 * Its KEYS, ARGV and reply: `lua/extend.lua`.
 */
export const extendScript = defineLuaScript({
  name: 'frontier-extend',
  keys: 'variadic',
  file: FRONTIER_LUA.file('lua/extend.lua'),
});
