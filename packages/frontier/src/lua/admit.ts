import { defineLuaScript } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * Admits candidate URLs in one atomic step: picks those that are new and
 * within the page budgets, counts them against the budgets, marks them seen
 * and appends them to their groups' backlogs. A URL is in the seen-set if and
 * only if it is somewhere (backlog, queue or done), whatever process dies when.
 * Its KEYS, ARGV and reply: `lua/admit.lua`.
 */
export const admitScript = defineLuaScript({
  name: 'frontier-admit',
  keys: 5,
  file: FRONTIER_LUA.file('lua/admit.lua'),
});

/**
 * Appends one URL that was already claimed in the seen-set (a redirect handed
 * over by the job that followed it) to its group's backlog.
 * Its KEYS, ARGV and reply: `lua/push-claimed.lua`.
 */
export const pushClaimedScript = defineLuaScript({
  name: 'frontier-push-claimed',
  keys: 1,
  file: FRONTIER_LUA.file('lua/push-claimed.lua'),
});

/**
 * Grants a shard of a crawl with --max-pages more of the crawl-wide budget:
 * each shard admits against its own grant (its scripts reach only its own
 * slot), and the crawl's grants never add up to more than the budget.
 * Its KEYS, ARGV and reply: `lua/grant-pages.lua`.
 */
export const grantPagesScript = defineLuaScript({
  name: 'frontier-grant-pages',
  keys: 1,
  file: FRONTIER_LUA.file('lua/grant-pages.lua'),
});
