--[[
  backlog (include):
  Lua shared by the backlog scripts (stage one of the frontier). Under the
  backlog prefix P (same hash tag as the rest of the crawl):

  - `P q:<group>:<bucket>`: a list per group and bucket of compact entries, the
    URL's job id (its `urlFingerprint`, 23 characters) then the URL (a redirect
    handed over as a job of its own carries `>hops ` before the URL). A bucket
    is a depth (`3`), or a depth and a priority other than 0 (`3p10`, `3p-5`:
    a crawler's `enqueue(urls, { priority })`). FIFO within a bucket; the
    highest priority first, then the lowest depth: breadth-first per group.
  - `P d:<group>`: the buckets that hold entries (a sorted set, score =
    depth - priority * BACKLOG_PRIORITY_STEP, so the lowest score is next).
  - `P groups`: the groups with entries, scored by when each may next release
    a job (ms, Redis clock); `P count`: entries in all backlogs.
  - `P r:<group>`: ids of the jobs released for the group and not yet taken
    by a worker (pruned against BullMQ's own sets when read).
  - `P at`: per group, the next free slot on its release horizon (ms).

  Defines backlog_entry(fp, url, hops), backlog_bucket(depth, priority),
  backlog_push(P, group, bucket, entry, clock), backlog_pop(P, group, cursor)
  and backlog_decode(entry).
  1000000 is BACKLOG_PRIORITY_STEP (backlog-lua.ts): more than any depth.
]]
local BACKLOG_ID = 23
local function backlog_entry(id, url, hops)
  if hops == nil or hops == 0 then return id .. url end
  return id .. '>' .. hops .. ' ' .. url
end

-- A depth's bucket: the depth alone at priority 0 (as before priorities), else depth..'p'..priority.
local function backlog_bucket(depth, priority)
  if priority == nil or priority == 0 then return tostring(depth) end
  return depth .. 'p' .. priority
end

-- The bucket's depth and priority, and its score among the group's buckets (lowest first).
local function backlog_bucket_parts(bucket)
  local depth, priority = string.match(bucket, '^(%d+)p(-?%d+)$')
  if depth == nil then
    depth = tonumber(bucket)
    return depth, 0, depth
  end
  depth, priority = tonumber(depth), tonumber(priority)
  return depth, priority, depth - priority * 1000000
end

-- Only a new list registers its bucket in its group's buckets and its group
-- among those waiting: a list that held entries already is registered (both
-- are written when a list is made, and taken out only once it is empty: a
-- bucket by backlog_pop, a group by the release that finds it drained). So a
-- URL pushed onto a waiting bucket costs its RPUSH alone. clock: a function
-- giving the time (now_ms), asked only when a group may start waiting.
local function backlog_push(prefix, group, bucket, entry, clock)
  bucket = tostring(bucket)
  if redis.call('RPUSH', prefix .. 'q:' .. group .. ':' .. bucket, entry) > 1 then return end
  local _, _, score = backlog_bucket_parts(bucket)
  redis.call('ZADD', prefix .. 'd:' .. group, score, bucket)
  -- NX: a group already waiting keeps its place (and its next release time).
  redis.call('ZADD', prefix .. 'groups', 'NX', clock(), group)
end

-- Pops the group's next entry, highest priority then lowest depth first;
-- cursor (a table per group and script run) remembers the bucket being
-- drained. Returns entry, depth, priority or nil.
local function backlog_pop(prefix, group, cursor)
  local buckets = prefix .. 'd:' .. group
  while true do
    if cursor.bucket == nil then
      cursor.bucket = redis.call('ZRANGE', buckets, 0, 0)[1]
      if cursor.bucket == nil then return nil end
      cursor.depth, cursor.priority = backlog_bucket_parts(cursor.bucket)
    end
    local entry = redis.call('LPOP', prefix .. 'q:' .. group .. ':' .. cursor.bucket)
    if entry then return entry, cursor.depth, cursor.priority end
    redis.call('ZREM', buckets, cursor.bucket)
    cursor.bucket = nil
  end
end

-- job id, url, redirect hops so far
local function backlog_decode(entry)
  local id = string.sub(entry, 1, BACKLOG_ID)
  if string.byte(entry, BACKLOG_ID + 1) == 62 then -- '>'
    local space = string.find(entry, ' ', BACKLOG_ID + 2, true)
    return id, string.sub(entry, space + 1), tonumber(string.sub(entry, BACKLOG_ID + 2, space - 1))
  end
  return id, string.sub(entry, BACKLOG_ID + 1), 0
end

