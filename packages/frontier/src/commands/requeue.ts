import { CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { BACKLOG_INCLUDE } from './backlog-lua.js';

/**
 * Hands a job's URLs it will not fetch back to the front of their group's
 * backlog (they were next), in one atomic step with the job's own change, so
 * each URL is in the backlog or in a job, never both, never neither:
 * its data becomes the one URL left to it, or its progress says every URL it
 * carried is handled (a retry of it then fetches nothing). Only while the
 * caller holds the job's lock: a job another worker took over is left alone.
 * KEYS: 1 backlog count, 2 job hash, 3 job lock
 * ARGV: 1 backlog prefix, 2 group, 3 lock token, 4 the job's new data ('' = as is),
 *       5 the job's new progress ('' = as is), then per URL 4 values: depth, id, url, redirect hops
 * Reply: 1 done, 0 the lock is not the caller's (nothing written)
 */
export const requeueScript = defineLuaScript({
  name: 'frontier-requeue',
  keys: 3,
  includes: [CLOCK_INCLUDE, BACKLOG_INCLUDE],
  lua: `
if redis.call('GET', KEYS[3]) ~= ARGV[3] then return 0 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'data', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], 'progress', ARGV[5]) end
local prefix, group = ARGV[1], ARGV[2]
local units = (#ARGV - 5) / 4
if units == 0 then return 1 end
-- Last first: LPUSH puts each in front of the one after it.
local depths = {}
for u = units, 1, -1 do
  local at = 5 + (u - 1) * 4
  local depth = ARGV[at + 1]
  redis.call('LPUSH', prefix .. 'q:' .. group .. ':' .. depth, backlog_entry(ARGV[at + 2], ARGV[at + 3], tonumber(ARGV[at + 4])))
  depths[depth] = true
end
for depth in pairs(depths) do redis.call('ZADD', prefix .. 'd:' .. group, tonumber(depth), depth) end
-- NX: a group still waiting keeps its place; one that had left the backlogs comes back due now.
redis.call('ZADD', prefix .. 'groups', 'NX', now_ms(), group)
redis.call('INCRBY', KEYS[1], units)
return 1
`,
});
