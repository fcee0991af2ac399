--[[
  retake-start:
  A start the caller missed (its process woke past the late-start allowance):
  when no start of the group was admitted after it, and the group is not
  paused, it starts now instead, and the group's pacing moves back by the
  lateness, so the next start is spaced from this one as from any other. A
  later admission may already have been given the slot after it: then this
  one is given back (a late start, as `abandon` counts it), and the caller
  asks again. Refused whenever a crawl-wide cap is in force (its slots are
  shared by every group). A grace (ARGV 6) moves the pacing back by that
  much more: the caller may then go up to that late again (its reply crosses
  the same busy event loop that made it late) without crowding the next
  start, instead of giving the slot back and waiting a whole interval.
  A start its server's level admitted too (ARGV 4) is held to the same rule
  there: it must also be the server's latest admission (its pacing then
  moves back as well, grace included), or still within the lateness the
  server's window allows (ARGV 5), grace counted, else another group's start
  reserved after it at the server would crowd that server's window.
  KEYS[1] group hash
  KEYS[2] leases zset
  KEYS[3] server hash (not read when the group holds the server alone: see server-gate.lua)
  KEYS[4] server lease zset (both KEYS[1] again when there is no server)
  ARGV[1] lease id
  ARGV[2] leaseMs
  ARGV[3] global interval (0 = no crawl-wide cap)
  ARGV[4] server ('' = none)
  ARGV[5] how late a start may go at the server (ms)
  ARGV[6] grace ms ('' or absent = 0)
  Reply: {Ok, startAt (string)} | {DeniedRate} (given back)
  Codes: 1 Ok, 2 DeniedRate
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/redis/lua/args.lua"
--- @include "leases.lua"
local now = now_ms()
local lease_ms = tonumber(ARGV[2])
local score = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
local h = redis.call('HMGET', KEYS[1], 'tat', 'pausedUntil', 'lastAdmitAt', 'leasesKeptTo', 'slippedStarts', 'soloAt', 'stat')
local function give_back()
  give_back_late(KEYS[1], KEYS[2], ARGV[1])
  return {2}
end
if not score or tonumber(ARGV[3]) > 0 or num(h[2], 0) > now then return give_back() end
-- Its reserved start: acquire scores a lease by start + leaseMs and records
-- the start of the group's latest admission.
local start = score - lease_ms
local last = tonumber(h[3])
if not last or math.abs(last - start) > 0.01 or now < start then return give_back() end
-- The server's pacing (a rate keeps its tat) is checked like the group's.
local server = ARGV[4] or ''
local grace = tonumber(ARGV[6]) or 0
local server_tat = nil
-- A server this group holds alone keeps its pacing in the group's hash (see
-- server-gate.lua), and the group's latest admission, checked above, is the server's.
local held = server ~= '' and h[6] == server
if held then
  server_tat = tonumber(h[7])
elseif server ~= '' then
  local s = redis.call('HMGET', KEYS[3], 'tat', 'lastAdmitAt')
  if s[1] and math.abs(num(s[2], -1) - start) <= 0.01 then server_tat = tonumber(s[1])
  elseif s[1] and now - start + grace > tonumber(ARGV[5]) then return give_back() end
end
-- The group's fields change in one write (this runs on every late start of a busy process).
local fields = {'lastAdmitAt', fmt(now), 'slippedStarts', num(h[5], 0) + 1}
local tat = tonumber(h[1])
if tat then
  fields[#fields + 1] = 'tat'
  fields[#fields + 1] = fmt(tat + (now - start) + grace)
end
if server_tat and held then
  fields[#fields + 1] = 'stat'
  fields[#fields + 1] = fmt(server_tat + (now - start) + grace)
elseif server_tat then
  redis.call('HSET', KEYS[3], 'tat', fmt(server_tat + (now - start) + grace), 'lastAdmitAt', fmt(now))
end
-- A server lease (its concurrency cap, never on a held server) runs from the new start too.
if server ~= '' and not held and redis.call('ZADD', KEYS[4], 'XX', 'CH', fmt(now + lease_ms), ARGV[1]) == 1 then keep_leases(KEYS[4], now) end
redis.call('ZADD', KEYS[2], fmt(now + lease_ms), ARGV[1])
local extended_to = extend_leases(KEYS[2], now + lease_ms, num(h[4], 0), now, lease_ms)
if extended_to then
  fields[#fields + 1] = 'leasesKeptTo'
  fields[#fields + 1] = fmt(extended_to)
end
redis.call('HSET', KEYS[1], unpack(fields))
return {1, fmt(now)}
