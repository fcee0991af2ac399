--[[
  release-units (include):
  What the release (a new job of a group's URLs) and the continuation (a job
  going on with its group's next URLs) share: how fast a group's jobs may go,
  each URL's fields in its job's data, the job's data, and the group's place
  among the groups once some of its URLs left its backlog.
  Defines rate_loose(g, max_ready), slot_lag(g, slot, now, window),
  unit_json(url, depth, priority, hops, due, lag), pop_slotted(prefix, g, cursor, wake, now, window, n),
  units_data(group, units, first_id) and settle_group(prefix, g, settle).
]]
--- @include "@crawlq/redis/lua/args.lua"
--- @include "backlog.lua"

-- A rate too fast to bind a capped group's jobs: its cap holds it back
-- first (a request holds its slot longer than cap intervals), or using the
-- rate would take more of its jobs at once than a group may have waiting
-- (each job's URLs go one after another, one hold each; 1.5 holds with the
-- parse). Such a group is released as one without a rate is (several URLs
-- per job, no start slots, at most its cap in flight): its jobs could hardly
-- start faster than its rate, and the gate still checks every start against
-- it (a start a little early waits there, in-process). Without a cap the
-- group keeps its slots: the release alone bounds its jobs in flight.
local function rate_loose(g, max_ready)
  if g.interval <= 0 or g.hold <= 0 or g.conc <= 0 then return false end
  return g.hold > g.conc * g.interval or 1.5 * g.hold > max_ready * g.interval
end

-- How much later than its slot a job of the group asks (a slot that is now: not at all).
-- A group whose starts run behind its slots (its pacing is ahead of now) gets
-- each job that much later, so no job waits in a worker much longer than the
-- window. Half the window at most, so the group is never held back by a lag
-- alone; none once its pacing has caught up with now (the lag recorded is then old).
local function slot_lag(g, slot, now, window)
  if slot > now then return math.min(g.lag, window / 2) end
  return 0
end

-- A URL's fields in its job's data (due: its start slot, for a group its rate
-- holds back; priority: kept so that a URL handed back returns to its bucket).
local function unit_json(url, depth, priority, hops, due, lag)
  local json = ',"url":' .. cjson.encode(url) .. ',"depth":' .. depth
  if priority ~= 0 then json = json .. ',"priority":' .. priority end
  if hops > 0 then json = json .. ',"redirects":' .. hops end
  if due then
    json = json .. ',"due":' .. math.floor(due)
    if lag >= 1 then json = json .. ',"lag":' .. math.floor(lag) end
  end
  return json
end

-- Up to n of the group's next URLs, each with the next slot on its horizon
-- from `wake` (a slot now or past: due at once): their units, the wake after
-- the last, and whether its backlog ran dry.
local function pop_slotted(prefix, g, cursor, wake, now, window, n)
  local units = {}
  while #units < n do
    local slot = math.max(wake, now, g.tat - g.tau)
    local entry, depth, priority = backlog_pop(prefix, g.name, cursor)
    if not entry then return units, wake, true end
    wake = slot + g.interval
    local id, url, hops = backlog_decode(entry)
    units[#units + 1] = {id = id, depth = depth, json = unit_json(url, depth, priority, hops, slot > now and slot or nil, slot_lag(g, slot, now, window))}
  end
  return units, wake, false
end

-- A job's data: its first URL's fields, the others as its batch. first_id:
-- the first URL's id, written when it is not the job's own (a job going on
-- with more URLs keeps its id); nil on a job released with its first URL's id.
local function units_data(group, units, first_id)
  local data = '{"group":' .. cjson.encode(group) .. units[1].json
  if first_id then data = data .. ',"id":"' .. first_id .. '"' end
  if #units > 1 then
    local more = {}
    for u = 2, #units do more[u - 1] = '{"id":"' .. units[u].id .. '"' .. units[u].json .. '}' end
    data = data .. ',"batch":[' .. table.concat(more, ',') .. ']'
  end
  return data .. '}'
end

-- The group's place once a release or a continuation moved some of its URLs
-- (settle: started, empty, paused, wake, wake_before, probing, moved, next_score, now, window).
local function settle_group(prefix, g, settle)
  local release_at_key = prefix .. 'at'
  if not settle.started then
    if settle.moved > 0 then redis.call('HSET', release_at_key, g.name, 'probe:' .. math.floor(settle.now)) end
  elseif settle.wake ~= settle.wake_before or settle.probing then
    redis.call('HSET', release_at_key, g.name, fmt(settle.wake))
  end
  if settle.empty then
    redis.call('ZREM', prefix .. 'groups', g.name)
    redis.call('DEL', prefix .. 'r:' .. g.name)
    -- Slots it gave out that are still ahead stay taken: the links its jobs'
    -- pages add meanwhile get slots after them, not on them (two jobs on one
    -- slot: a start the gate reserves ahead, a confirmation, a lag that
    -- grows). One that adapts its pace forgets them: after a dry spell it probes again.
    if not (settle.started and not g.adaptive and settle.wake > settle.now) then redis.call('HDEL', release_at_key, g.name) end
  elseif settle.paused then
    redis.call('ZADD', prefix .. 'groups', fmt(math.min(g.paused_until - settle.window, settle.next_score)), g.name)
  else
    redis.call('ZADD', prefix .. 'groups', fmt(settle.next_score), g.name)
  end
end
