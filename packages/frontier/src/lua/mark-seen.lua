--[[
  seen-mark:
  Marks fingerprints seen (those already present keep their value).
  KEYS[1] seen-set meta
  ARGV[1..6] the seen-set config (configArgs in seen-set.ts): mode ('exact' | 'bloom'),
            bits, hashes, partBits, expectedUrls, falsePositiveRate (bloom numbers 0 in exact mode)
  ARGV[7..] fingerprints (16 bytes each)
  Reply: {Ok, how many were new} | {ModeMismatch, stored}
  Codes: 1 Ok, 2 ModeMismatch (SeenScriptStatus)
]]
--- @include "seen-listed.lua"
local s, fps = seen_open_listed()
if not s then return fps end -- the mode-mismatch reply
local added = 0
for _, new in ipairs(seen_add_many(s, fps, '')) do
  if new then added = added + 1 end
end
seen_save(s)
return {1, added}
