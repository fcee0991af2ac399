--[[
  seen-check:
  Read-only membership test.
  KEYS[1] seen-set meta
  ARGV[1..6] the seen-set config (configArgs in seen-set.ts): mode ('exact' | 'bloom'),
            bits, hashes, partBits, expectedUrls, falsePositiveRate (bloom numbers 0 in exact mode)
  ARGV[7..] fingerprints (16 bytes each)
  Reply: {Ok, 1 (seen) or 0 per fingerprint} | {ModeMismatch, stored}
  Codes: 1 Ok, 2 ModeMismatch (SeenScriptStatus)
]]
--- @include "seen-listed.lua"
local s, fps = seen_open_listed()
if not s then return fps end -- the mode-mismatch reply
local out = {1}
for _, seen in ipairs(seen_has_many(s, fps)) do
  out[#out + 1] = seen and 1 or 0
end
return out
