--[[
  policy-check (include): answers {StalePolicy, stored version} unless the
  policy hash holds the version the caller resolved its limits from. Include
  it last, right before the script's body: it returns early.
  KEYS[1] policy hash
  ARGV[1] policy version
  Codes: 0 StalePolicy
]]
local stored_version = redis.call('HGET', KEYS[1], 'version') or '0'
if stored_version ~= ARGV[1] then return {0, stored_version} end
