import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * A job done with its URLs goes on with its group's next ones: they leave the
 * backlog into the job's own data in one atomic step, with the start slots a
 * release would have given them now, so BullMQ's work for a new job is shared
 * by the URLs the job's own pages found. Declined while the crawl queue has
 * jobs waiting for a worker, and for a group a release would not move now.
 * Runs through GroupLimiter.runPaced; its KEYS, ARGV and reply: `lua/continue-job.lua`.
 */
export const continueJobScript = defineLuaScript({
  name: 'frontier-continue',
  keys: 'variadic',
  file: FRONTIER_LUA.file('lua/continue-job.lua'),
});
