import { defineLuaScript } from '@crawlq/redis';
import { SEEN_CONFIG_ARGS, SEEN_SET_INCLUDE } from './seen-set-lua.js';
import { ReserveCode, SeenScriptStatus } from './seen-script-status.js';

const FIRST = SEEN_CONFIG_ARGS + 1;

/**
 * Picks which candidates are new and within the page budgets, and counts them
 * against the budgets, in one atomic step. It does not mark them seen: the
 * caller adds the jobs first and marks them after (markSeenScript), so a
 * worker killed in between leaves the URLs unmarked (fetched again at worst),
 * never lost.
 *
 * KEYS: 1 seen-set meta, 2 admitted, 3 admittedPerGroup
 * ARGV: the seen-set config (SEEN_CONFIG_ARGS), maxPages (0 = none),
 *       maxPagesPerGroup (0 = none), then pairs fingerprint (16 bytes), group
 * Reply: {Ok, one ReserveCode per candidate} | {ModeMismatch, stored}
 */
export const reserveScript = defineLuaScript({
  name: 'seen-reserve',
  keys: 3,
  includes: [SEEN_SET_INCLUDE],
  lua: `
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local maxPages = tonumber(ARGV[${FIRST}])
local maxPerGroup = tonumber(ARGV[${FIRST + 1}])
local admitted = tonumber(redis.call('GET', KEYS[2]) or '0')
local fps = {}
for i = ${FIRST + 2}, #ARGV, 2 do fps[#fps + 1] = ARGV[i] end
local seen = seen_has_many(s, fps)
local result = {${SeenScriptStatus.Ok}}
for j = 1, #fps do
  local group = ARGV[${FIRST + 1} + 2 * j]
  local code
  if seen[j] then
    code = ${ReserveCode.Duplicate}
  elseif maxPages > 0 and admitted >= maxPages then
    code = ${ReserveCode.OverPageLimit}
  elseif maxPerGroup > 0 and tonumber(redis.call('HGET', KEYS[3], group) or '0') >= maxPerGroup then
    code = ${ReserveCode.OverGroupLimit}
  else
    admitted = admitted + 1
    if maxPerGroup > 0 then redis.call('HINCRBY', KEYS[3], group, 1) end
    code = ${ReserveCode.Admitted}
  end
  result[#result + 1] = code
end
redis.call('SET', KEYS[2], admitted)
return result
`,
});
