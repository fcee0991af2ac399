--[[
  seen-listed (include):
  The start of the scripts that take a list of fingerprints after the config
  (check, mark): `seen_open_listed()` returns the opened seen-set and the
  fingerprints, or nil and the mode-mismatch reply to return.
]]
--- @include "seen-set.lua"
local function seen_open_listed()
  local s, stored = seen_open()
  if not s then return nil, seen_mismatch(stored) end
  local fps = {}
  for i = 7, #ARGV do fps[#fps + 1] = ARGV[i] end
  return s, fps
end
