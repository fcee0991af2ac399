--[[
  slip:
  A start that went out later than its reserved slot allowed (the process
  stalled after the gate let it go): pushes the group's pacing back by that
  much, so the starts reserved from now on are spaced from when it really began.
  The crawl-wide pacing, when there is one, moves back as well, and so does
  the pacing of the server the start was admitted at (ARGV 2), whose next
  starts may belong to other groups.
  KEYS[1] group hash
  KEYS[2] global hash (KEYS[1] again when no crawl-wide cap is in force: not read)
  KEYS[3] server hash (KEYS[1] again when there is no server)
  ARGV[1] ms late beyond the allowance
  ARGV[2] server ('' = none)
  Reply: {Ok}
  Codes: 1 Ok
]]
--- @include "@crawlq/redis/lua/args.lua"
-- One read and one write of the group (this runs on every slipped start of a busy process).
local h = redis.call('HMGET', KEYS[1], 'tat', 'slippedStarts', 'soloAt', 'stat')
local fields = {'slippedStarts', num(h[2], 0) + 1}
local tat = tonumber(h[1])
if tat then
  fields[#fields + 1] = 'tat'
  fields[#fields + 1] = fmt(tat + tonumber(ARGV[1]))
end
-- A server the group holds alone keeps its pacing in the group's hash (see server-gate.lua).
local server = ARGV[2] or ''
local held_tat = nil
if server ~= '' and h[3] == server then held_tat = tonumber(h[4]) end
if held_tat then
  fields[#fields + 1] = 'stat'
  fields[#fields + 1] = fmt(held_tat + tonumber(ARGV[1]))
end
redis.call('HSET', KEYS[1], unpack(fields))
if KEYS[2] ~= KEYS[1] then
  local global_tat = tonumber(redis.call('HGET', KEYS[2], 'tat'))
  if global_tat then redis.call('HSET', KEYS[2], 'tat', fmt(global_tat + tonumber(ARGV[1]))) end
end
if server ~= '' and h[3] ~= server then
  local server_tat = tonumber(redis.call('HGET', KEYS[3], 'tat'))
  if server_tat then redis.call('HSET', KEYS[3], 'tat', fmt(server_tat + tonumber(ARGV[1]))) end
end
return {1}
