--[[
  server-gate (include):
  The server level of `acquire`: the server (the address the request's
  connection goes to) must admit the start too, in the same script, so no
  slot is held at one level while the request waits at the other, and no
  two groups on one server can hold each other up.
  Its keys and arguments follow acquire's own:
  KEYS[7] server hash (tat, wakeAt, admitted, deferred, lastAdmitAt)
  KEYS[8] server lease zset
  KEYS[9] servers set
  ARGV[18] server ('' = no server level: nothing here runs, nothing is read)
  ARGV[19] server interval ms (0 = no rate)
  ARGV[20] server concurrency (0 = no cap)
  `server_check(now, start)` returns the start the server allows (never
  earlier than `start`) or nil and a denial reply; it writes nothing unless
  it denies, so a group or crawl-wide denial after it costs the server nothing.
  `server_take(start, now, grace)` then records the admitted start (its pacing
  moved back by `grace` more, see acquire): one HSET (plus the
  lease, with a cap). Rate only, the level costs two commands per admission.
  A denial takes a wake slot on the server's own horizon, spaced by its
  interval: denied requests of all the groups on one server wake in the order
  they asked, one per free slot (fairness between groups on a server).
]]
--- @include "pacing.lua"
local SERVER = { name = ARGV[18] or '' }
local function server_check(now, start)
  if SERVER.name == '' then return start, nil end
  local interval = tonumber(ARGV[19])
  local conc = tonumber(ARGV[20])
  if interval <= 0 and conc <= 0 then SERVER.name = '' return start, nil end
  local s = redis.call('HMGET', KEYS[7], 'tat', 'wakeAt', 'admitted')
  SERVER.tat = num(s[1], 0)
  SERVER.admitted = s[3]
  SERVER.interval = interval
  SERVER.conc = conc
  local step = interval
  if step <= 0 then step = tonumber(ARGV[9]) end
  local function deny(code, earliest)
    local wake = take_wake_slot(KEYS[7], num(s[2], 0), math.max(earliest, now), step)
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
local function server_take(start, now, grace)
  if SERVER.name == '' then return end
  local fields = {'admitted', num(SERVER.admitted, 0) + 1, 'lastAdmitAt', fmt(start)}
  if SERVER.interval > 0 then
    fields[#fields + 1] = 'tat'
    fields[#fields + 1] = fmt(math.max(SERVER.tat, start) + SERVER.interval + (grace or 0))
  end
  redis.call('HSET', KEYS[7], unpack(fields))
  if not SERVER.admitted then redis.call('SADD', KEYS[9], SERVER.name) end
  if SERVER.conc > 0 then
    local lease_ms = tonumber(ARGV[8])
    redis.call('ZADD', KEYS[8], fmt(start + lease_ms), ARGV[3])
    redis.call('PEXPIRE', KEYS[8], math.ceil(start - now + lease_ms) + 1000)
  end
end
