import { defineLuaScript } from '@crawlq/redis';
import { SEEN_CONFIG_ARGS, SEEN_SET_INCLUDE } from './seen-set-lua.js';
import { SeenScriptStatus } from './seen-script-status.js';

const FIRST = SEEN_CONFIG_ARGS + 1;

/**
 * Marks one fingerprint seen in one atomic step and says whether it was new.
 * With an owner, a second claim by the same owner succeeds again (a job that
 * followed the same redirect before it was deferred or its worker died must
 * not lose the page). Exact mode keeps a digest of the owner as the entry's
 * value; bloom mode adds a second entry for the pair (owner, fingerprint), so a
 * false positive there errs towards fetching twice, never towards skipping.
 * KEYS: 1 seen-set meta
 * ARGV: the seen-set config (SEEN_CONFIG_ARGS), fingerprint (16 bytes),
 *       owner digest (16 bytes; '' = none), pair fingerprint (16 bytes; bloom with an owner only)
 * Reply: {Ok, 1 new or claimed before by this owner | 0 seen} | {ModeMismatch, stored}
 */
export const claimScript = defineLuaScript({
  name: 'seen-claim',
  keys: 1,
  includes: [SEEN_SET_INCLUDE],
  lua: `
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local fp = ARGV[${FIRST}]
local owner = ARGV[${FIRST + 1}]
local pair = ARGV[${FIRST + 2}]
local result = 0
local present = seen_get(s, fp)
if not present then
  local add = {fp}
  if s.mode == 'bloom' and pair ~= '' then add[2] = pair end
  seen_add_many(s, add, owner)
  result = 1
elseif owner ~= '' then
  if s.mode == 'exact' then
    if present == owner then result = 1 end
  elseif seen_has_many(s, {pair})[1] then
    result = 1
  end
end
seen_save(s)
return {${SeenScriptStatus.Ok}, result}
`,
});
