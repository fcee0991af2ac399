--[[
  server-gate (include):
  The server level of `acquire`: the server (the address the request's
  connection goes to) must admit the start too, in the same script, so no
  slot is held at one level while the request waits at the other, and no
  two groups on one server can hold each other up.
  Its keys and arguments follow acquire's own:
  KEYS[7] server hash (tat, wakeAt, admitted, deferred, lastAdmitAt, solo)
  KEYS[8] server lease zset
  KEYS[9] servers set
  ARGV[18] server ('' = no server level: nothing here runs, nothing is read)
  ARGV[19] server interval ms (0 = no rate)
  ARGV[20] server concurrency (0 = no cap)
  `server_check(now, start, held)` returns the start the server allows (never
  earlier than `start`) or nil and a denial reply; it writes nothing unless
  it denies or ends a solo hold (below), so a group or crawl-wide denial after
  it costs the server nothing.
  `server_take(start, now, grace, admitted)` then records the admitted start
  (its pacing moved back by `grace` more, see acquire): one HSET (plus the
  lease, with a cap). It returns the fields the group's own HSET must carry.
  A denial takes a wake slot on the server's own horizon, spaced by its
  interval: denied requests of all the groups on one server wake in the order
  they asked, one per free slot (fairness between groups on a server).

  A server that one group alone has used (the usual case: one host name per
  address) is held by that group, when it has a rate and no cap: its pacing
  (`stat`) is kept in the group's hash, which acquire reads and writes anyway,
  so the server costs no command of its own per request. The hold is the
  same pacing stored elsewhere, checked by the same rule. The group's
  `soloAt` names the server; the server's `solo` names the group, and its own
  `admitted` counts the starts up to the hold (the group's since then are its
  `admitted` less `soloBase`). The first group admitted at a server takes the
  hold, unless it holds another. The next group to come ends it: it moves the
  holder's `stat`, last start and admissions into the server's hash and takes
  the holder's fields away, in the same script. Every script that moves a
  server's pacing (retake-start, slip) reads the holder's fields first.
  `held` = {soloAt, stat} as acquire read them from the group's hash.
]]
--- @include "pacing.lua"
local SERVER = { name = ARGV[18] or '' }
-- KEYS[2] is the asking group's hash: its key prefix is that of every group's hash.
local function group_key(group)
  return string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[2]) .. group
end
-- Ends the hold of `holder` on this server (see above), and returns the server's fields as the holder left them.
local function end_hold(holder, s)
  local key = group_key(holder)
  local g = redis.call('HMGET', key, 'soloAt', 'stat', 'lastAdmitAt', 'admitted', 'soloBase')
  local fields = {'solo', ''}
  if g[1] == SERVER.name then
    redis.call('HDEL', key, 'soloAt', 'stat', 'soloBase')
    s[1] = fmt(math.max(num(s[1], 0), num(g[2], 0)))
    s[3] = num(s[3], 0) + math.max(0, num(g[4], 0) - num(g[5], 0))
    fields = {'solo', '', 'tat', s[1], 'admitted', s[3]}
    if g[3] then
      fields[#fields + 1] = 'lastAdmitAt'
      fields[#fields + 1] = g[3]
    end
  end
  -- Written now: a denial of this start further on must not undo it.
  redis.call('HSET', KEYS[7], unpack(fields))
  return s
end
local function server_check(now, start, held)
  if SERVER.name == '' then return start, nil end
  local interval = tonumber(ARGV[19])
  local conc = tonumber(ARGV[20])
  if interval <= 0 and conc <= 0 then SERVER.name = '' return start, nil end
  SERVER.interval = interval
  SERVER.conc = conc
  local wake_at = nil
  if conc <= 0 and held[1] == SERVER.name then
    SERVER.held = true
    SERVER.tat = num(held[2], 0)
  else
    local s = redis.call('HMGET', KEYS[7], 'tat', 'wakeAt', 'admitted', 'solo')
    if s[4] and s[4] ~= '' then s = end_hold(s[4], s) end
    SERVER.tat = num(s[1], 0)
    SERVER.admitted = s[3]
    wake_at = num(s[2], 0)
    -- The first group at a server with a rate and no cap holds it, unless it holds another.
    SERVER.claim = not s[3] and conc <= 0 and interval > 0 and not held[1]
  end
  local step = interval
  if step <= 0 then step = tonumber(ARGV[9]) end
  local function deny(code, earliest)
    if wake_at == nil then wake_at = num(redis.call('HGET', KEYS[7], 'wakeAt'), 0) end
    local wake = take_wake_slot(KEYS[7], wake_at, math.max(earliest, now), step)
    return nil, {code, math.ceil(wake - now), 0, fmt(step)}
  end
  if conc > 0 and redis.call('ZCOUNT', KEYS[8], '(' .. fmt(now), fmt(now + tonumber(ARGV[8]) + tonumber(ARGV[11]))) >= conc then
    return deny(8, now + step)
  end
  if interval <= 0 then return start, nil end
  local server_at = math.max(now, SERVER.tat)
  if server_at - now > tonumber(ARGV[4]) then return deny(7, server_at) end
  return math.max(start, server_at), nil
end
local function server_take(start, now, grace, admitted)
  if SERVER.name == '' then return {} end
  local tat = nil
  if SERVER.interval > 0 then tat = fmt(math.max(SERVER.tat, start) + SERVER.interval + (grace or 0)) end
  if SERVER.held then return {'stat', tat} end
  local fields = {'admitted', num(SERVER.admitted, 0) + 1, 'lastAdmitAt', fmt(start)}
  if tat then
    fields[#fields + 1] = 'tat'
    fields[#fields + 1] = tat
  end
  if SERVER.claim then
    fields[#fields + 1] = 'solo'
    fields[#fields + 1] = ARGV[2]
  end
  redis.call('HSET', KEYS[7], unpack(fields))
  if not SERVER.admitted then redis.call('SADD', KEYS[9], SERVER.name) end
  if SERVER.conc > 0 then
    local lease_ms = tonumber(ARGV[8])
    redis.call('ZADD', KEYS[8], fmt(start + lease_ms), ARGV[3])
    redis.call('PEXPIRE', KEYS[8], math.ceil(start - now + lease_ms) + 1000)
  end
  if SERVER.claim then return {'soloAt', SERVER.name, 'stat', tat, 'soloBase', admitted} end
  return {}
end
