--[[
  frontier-admit:
  Admits candidate URLs in one atomic step: picks those that are new and
  within the page budgets, counts them against the budgets, marks them seen
  and appends them to their groups' backlogs. A URL is in the seen-set if and
  only if it is somewhere (backlog, queue or done), whatever process dies when.

  KEYS[1] seen-set meta
  KEYS[2] admitted
  KEYS[3] admittedPerGroup
  KEYS[4] backlog count
  KEYS[5] pages granted to this shard (see grant-pages.lua)
  ARGV[1..6] the seen-set config (configArgs in seen-set.ts): mode ('exact' | 'bloom'),
            bits, hashes, partBits, expectedUrls, falsePositiveRate (bloom numbers 0 in exact mode)
  ARGV[7] maxPages (0 = none; -1 = a shard's: what the crawl granted it, KEYS[5])
  ARGV[8] maxPagesPerGroup (0 = none)
  ARGV[9] depth
  ARGV[10] backlog prefix
  ARGV[11] a grant this shard was given that KEYS[5] may not hold yet (0 = none)
  ARGV[12] priority (0 = none: see backlog.lua)
  ARGV[13] hold ms: a held group that starts waiting is due only this much later
  ARGV[14] n, the held groups: those a job in hand will ask to go on with (see continue-job.lua)
  ARGV[15..14+n] the held groups
  ARGV[15+n..] per candidate 4 values: fingerprint (16 bytes), job id (the fingerprint's text), group, URL
  Reply: {Ok, one ReserveCode per candidate} | {ModeMismatch, stored}
  Codes: 1 Ok, 2 ModeMismatch (SeenScriptStatus); per candidate 1 Admitted,
         0 Duplicate, -1 OverPageLimit, -2 OverGroupLimit (ReserveCode)
]]
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "seen-set.lua"
--- @include "backlog.lua"
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local maxPages = tonumber(ARGV[7])
local maxPerGroup = tonumber(ARGV[8])
local depth = tonumber(ARGV[9])
local prefix = ARGV[10]
local bucket = backlog_bucket(depth, tonumber(ARGV[12]))
-- A job of the group in hand takes its pages' links itself when it ends (it
-- goes on with them): a release moving them into a job of their own first
-- would cost BullMQ's work for a job. So the group is due that much later,
-- should the job not go on after all (it asks the release to take them then).
local hold_ms = tonumber(ARGV[13])
local held = {}
local held_count = tonumber(ARGV[14])
for i = 1, held_count do held[ARGV[14 + i]] = true end
local function held_clock() return now_ms() + hold_ms end
-- The page cap, if any: the crawl's, or a shard's grant (raised to a grant
-- given since, which a process that died before this call never stored).
local cap = nil
if maxPages > 0 then
  cap = maxPages
elseif maxPages < 0 then
  cap = tonumber(redis.call('GET', KEYS[5]) or '0')
  local given = tonumber(ARGV[11])
  if given > cap then
    cap = given
    redis.call('SET', KEYS[5], cap)
  end
end
-- Read only when a budget needs it: the count is added to at the end.
local admitted = 0
if cap then admitted = tonumber(redis.call('GET', KEYS[2]) or '0') end
local result = {1}
local new = 0
-- URLs over the page cap that their group's budget would still take, per
-- group: the answer OverPageLimit means "admissible with more pages", which a
-- shard asks its grant for, so it must not count a page its group cannot use.
local wouldTake = {}
for at = 15 + held_count, #ARGV, 4 do
  local fp, group = ARGV[at], ARGV[at + 2]
  local over = nil
  if maxPerGroup > 0 and tonumber(redis.call('HGET', KEYS[3], group) or '0') + (wouldTake[group] or 0) >= maxPerGroup then
    over = -2
  elseif cap and admitted >= cap then
    over = -1
  end
  local code
  if over then
    -- A URL seen before is a duplicate, whatever the budgets say.
    if seen_has_many(s, {fp})[1] then
      code = 0
    else
      code = over
      if over == -1 then wouldTake[group] = (wouldTake[group] or 0) + 1 end
    end
  elseif not seen_add_many(s, {fp}, '')[1] then
    -- Within the budgets, the insert is the check: one command per URL, not two.
    code = 0
  else
    admitted = admitted + 1
    new = new + 1
    if maxPerGroup > 0 then redis.call('HINCRBY', KEYS[3], group, 1) end
    backlog_push(prefix, group, bucket, backlog_entry(ARGV[at + 1], ARGV[at + 3], 0), held[group] and held_clock or now_ms)
    code = 1
  end
  result[#result + 1] = code
end
seen_save(s)
if new > 0 then
  redis.call('INCRBY', KEYS[4], new)
  redis.call('INCRBY', KEYS[2], new)
end
return result
