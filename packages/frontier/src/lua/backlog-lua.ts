import { luaInclude } from '@crawlq/redis';
import { FRONTIER_LUA } from './files.js';

/**
 * How far apart one priority step puts buckets: more than any depth, so a
 * higher priority always goes first, whatever the depths.
 */
export const BACKLOG_PRIORITY_STEP = 1_000_000;
/** Priorities `enqueue` accepts: integers from -1,000 to 1,000 (default 0); scores stay exact in a double. */
export const MAX_BACKLOG_PRIORITY = 1_000;


/** `lua/backlog.lua` as a string include, for the scripts still written in TypeScript strings. */
export const BACKLOG_INCLUDE = luaInclude('backlog', FRONTIER_LUA.file('lua/backlog.lua').text);
