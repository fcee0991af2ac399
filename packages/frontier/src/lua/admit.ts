import { CLOCK_INCLUDE, defineLuaScript } from '@crawlq/redis';
import { BACKLOG_INCLUDE } from './backlog-lua.js';
import { SEEN_CONFIG_ARGS, SEEN_SET_INCLUDE } from './seen-set-lua.js';
import { ReserveCode, SeenScriptStatus } from './seen-script-status.js';

const FIRST = SEEN_CONFIG_ARGS + 1;

/**
 * Admits candidate URLs in one atomic step: picks those that are new and
 * within the page budgets, counts them against the budgets, marks them seen
 * and appends them to their groups' backlogs. A URL is in the seen-set if and
 * only if it is somewhere (backlog, queue or done), whatever process dies when.
 *
 * KEYS: 1 seen-set meta, 2 admitted, 3 admittedPerGroup, 4 backlog count,
 *       5 pages granted to this shard (see grantPagesScript)
 * ARGV: the seen-set config (SEEN_CONFIG_ARGS), maxPages (0 = none; -1 = a
 *       shard's: what the crawl granted it, KEYS[5]), maxPagesPerGroup
 *       (0 = none), depth, backlog prefix, a grant this shard was given that
 *       KEYS[5] may not hold yet (0 = none), priority (0 = none: see
 *       BACKLOG_INCLUDE), then quadruples fingerprint
 *       (16 bytes), job id (the fingerprint's text), group, URL
 * Reply: {Ok, one ReserveCode per candidate} | {ModeMismatch, stored}
 */
export const admitScript = defineLuaScript({
  name: 'frontier-admit',
  keys: 5,
  includes: [CLOCK_INCLUDE, SEEN_SET_INCLUDE, BACKLOG_INCLUDE],
  lua: `
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local maxPages = tonumber(ARGV[${FIRST}])
local maxPerGroup = tonumber(ARGV[${FIRST + 1}])
local depth = tonumber(ARGV[${FIRST + 2}])
local prefix = ARGV[${FIRST + 3}]
local bucket = backlog_bucket(depth, tonumber(ARGV[${FIRST + 5}]))
-- The page cap, if any: the crawl's, or a shard's grant (raised to a grant
-- given since, which a process that died before this call never stored).
local cap = nil
if maxPages > 0 then
  cap = maxPages
elseif maxPages < 0 then
  cap = tonumber(redis.call('GET', KEYS[5]) or '0')
  local given = tonumber(ARGV[${FIRST + 4}])
  if given > cap then
    cap = given
    redis.call('SET', KEYS[5], cap)
  end
end
-- Read only when a budget needs it: the count is added to at the end.
local admitted = 0
if cap then admitted = tonumber(redis.call('GET', KEYS[2]) or '0') end
local result = {${SeenScriptStatus.Ok}}
local new = 0
-- URLs over the page cap that their group's budget would still take, per
-- group: the answer OverPageLimit means "admissible with more pages", which a
-- shard asks its grant for, so it must not count a page its group cannot use.
local wouldTake = {}
for at = ${FIRST + 6}, #ARGV, 4 do
  local fp, group = ARGV[at], ARGV[at + 2]
  local over = nil
  if maxPerGroup > 0 and tonumber(redis.call('HGET', KEYS[3], group) or '0') + (wouldTake[group] or 0) >= maxPerGroup then
    over = ${ReserveCode.OverGroupLimit}
  elseif cap and admitted >= cap then
    over = ${ReserveCode.OverPageLimit}
  end
  local code
  if over then
    -- A URL seen before is a duplicate, whatever the budgets say.
    if seen_has_many(s, {fp})[1] then
      code = ${ReserveCode.Duplicate}
    else
      code = over
      if over == ${ReserveCode.OverPageLimit} then wouldTake[group] = (wouldTake[group] or 0) + 1 end
    end
  elseif not seen_add_many(s, {fp}, '')[1] then
    -- Within the budgets, the insert is the check: one command per URL, not two.
    code = ${ReserveCode.Duplicate}
  else
    admitted = admitted + 1
    new = new + 1
    if maxPerGroup > 0 then redis.call('HINCRBY', KEYS[3], group, 1) end
    backlog_push(prefix, group, bucket, backlog_entry(ARGV[at + 1], ARGV[at + 3], 0), now_ms)
    code = ${ReserveCode.Admitted}
  end
  result[#result + 1] = code
end
seen_save(s)
if new > 0 then
  redis.call('INCRBY', KEYS[4], new)
  redis.call('INCRBY', KEYS[2], new)
end
return result
`,
});

/**
 * Appends one URL that was already claimed in the seen-set (a redirect handed
 * over by the job that followed it) to its group's backlog.
 * KEYS: 1 backlog count
 * ARGV: backlog prefix, group, depth, job id (the URL's fingerprint), URL, redirect hops so far
 */
export const pushClaimedScript = defineLuaScript({
  name: 'frontier-push-claimed',
  keys: 1,
  includes: [CLOCK_INCLUDE, BACKLOG_INCLUDE],
  lua: `
backlog_push(ARGV[1], ARGV[2], tonumber(ARGV[3]), backlog_entry(ARGV[4], ARGV[5], tonumber(ARGV[6])), now_ms)
return redis.call('INCR', KEYS[1])
`,
});

/**
 * Grants a shard of a crawl with --max-pages more of the crawl-wide budget:
 * each shard admits against its own grant (its scripts reach only its own
 * slot), and the crawl's grants never add up to more than the budget.
 * Reply: {the shard's grants in total, given before or now; given now}. The
 * shard's next admission stores the total if it holds less, so a process
 * that dies between the two steps loses no grant.
 * KEYS: 1 the crawl's grants (a hash: `total`, and one field per shard)
 * ARGV: shard index, pages wanted, maxPages
 */
export const grantPagesScript = defineLuaScript({
  name: 'frontier-grant-pages',
  keys: 1,
  lua: `
local give = math.min(tonumber(ARGV[2]), tonumber(ARGV[3]) - tonumber(redis.call('HGET', KEYS[1], 'total') or '0'))
if give > 0 then
  redis.call('HINCRBY', KEYS[1], 'total', give)
  return {redis.call('HINCRBY', KEYS[1], ARGV[1], give), give}
end
return {tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0'), 0}
`,
});
