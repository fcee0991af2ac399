import { luaInclude } from '@crawlq/redis';

/**
 * Lua shared by the backlog scripts (stage one of the frontier). Under the
 * backlog prefix P (same hash tag as the rest of the crawl):
 *
 * - `P q:<group>:<depth>`: a list per group and depth of compact entries, the
 *   URL's job id (its `urlFingerprint`, 23 characters) then the URL (a redirect
 *   handed over as a job of its own carries `>hops ` before the URL). FIFO within a depth,
 *   lowest depth first: breadth-first per group.
 * - `P d:<group>`: the depths that hold entries (a sorted set, score = depth).
 * - `P groups`: the groups with entries, scored by when each may next release
 *   a job (ms, Redis clock); `P count`: entries in all backlogs.
 * - `P r:<group>`: ids of the jobs released for the group and not yet taken
 *   by a worker (pruned against BullMQ's own sets when read).
 * - `P at`: per group, the next free slot on its release horizon (ms).
 *
 * Defines backlog_entry(fp, url, hops), backlog_push(P, group, depth, entry, now, touched),
 * backlog_pop(P, group, cursor) and backlog_decode(entry).
 */
export const BACKLOG_INCLUDE = luaInclude(
  'backlog',
  `
local BACKLOG_ID = 23
local function backlog_entry(id, url, hops)
  if hops == nil or hops == 0 then return id .. url end
  return id .. '>' .. hops .. ' ' .. url
end

-- touched: a table the caller keeps for one script run, so a batch of URLs of
-- one group and depth costs one RPUSH each and the bookkeeping once.
local function backlog_push(prefix, group, depth, entry, now, touched)
  redis.call('RPUSH', prefix .. 'q:' .. group .. ':' .. depth, entry)
  local mark = group .. ':' .. depth
  if not touched[mark] then
    touched[mark] = true
    redis.call('ZADD', prefix .. 'd:' .. group, depth, depth)
    -- NX: a group already waiting keeps its place (and its next release time).
    redis.call('ZADD', prefix .. 'groups', 'NX', now, group)
  end
end

-- Pops the group's next entry, lowest depth first; cursor (a table per group
-- and script run) remembers the depth being drained. Returns entry, depth or nil.
local function backlog_pop(prefix, group, cursor)
  local depths = prefix .. 'd:' .. group
  while true do
    if cursor.depth == nil then
      cursor.depth = redis.call('ZRANGE', depths, 0, 0)[1]
      if cursor.depth == nil then return nil end
    end
    local entry = redis.call('LPOP', prefix .. 'q:' .. group .. ':' .. cursor.depth)
    if entry then return entry, tonumber(cursor.depth) end
    redis.call('ZREM', depths, cursor.depth)
    cursor.depth = nil
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

`,
);
