--[[
  seen-claim:
  Marks one fingerprint seen in one atomic step and says whether it was new.
  With an owner, a second claim by the same owner succeeds again (a job that
  followed the same redirect before it was deferred or its worker died must
  not lose the page). Exact mode keeps a digest of the owner as the entry's
  value; bloom mode adds a second entry for the pair (owner, fingerprint), so a
  false positive there errs towards fetching twice, never towards skipping.
  KEYS[1] seen-set meta
  ARGV[1..6] the seen-set config (configArgs in seen-set.ts): mode ('exact' | 'bloom'),
            bits, hashes, partBits, expectedUrls, falsePositiveRate (bloom numbers 0 in exact mode)
  ARGV[7] fingerprint (16 bytes)
  ARGV[8] owner digest (16 bytes; '' = none)
  ARGV[9] pair fingerprint (16 bytes; bloom with an owner only)
  Reply: {Ok, 1 new or claimed before by this owner | 0 seen} | {ModeMismatch, stored}
  Codes: 1 Ok, 2 ModeMismatch (SeenScriptStatus)
]]
--- @include "seen-set.lua"
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local fp = ARGV[7]
local owner = ARGV[8]
local pair = ARGV[9]
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
return {1, result}
