--[[
  num(value, default): a number from an ARGV or field that may be missing.
  fmt(x): a number as a string with µs precision ('%.3f'), for storing and
  returning fractional times (a Lua number in a reply loses its fraction, and
  stored times rounded to ms would make pacing drift).
]]
local function num(value, default)
  local n = tonumber(value)
  if n == nil then return default end
  return n
end
local function fmt(x)
  return string.format('%.3f', x)
end
