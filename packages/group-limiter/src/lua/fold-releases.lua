--[[
  fold-releases (include):
  A release that has nothing to report but the end of its request (a status
  that is no 429 or 503, no failure, a group that does not adapt, with a hold
  time and no 429 strikes to reset, as its last admission by the process
  said) only removes its lease (ZREM, no script): the hold
  time it measured and the request it counts are written later, folded
  together with the process's other such releases of the group, by its next
  admission of the group or by its flush (write-releases.lua).
  `fold_releases(hold, started, decay, addend, last, sent)` takes the group's
  holdMs and started fields and the folded releases (see acquire's ARGV
  22..25: last '' when none measured a hold) and returns the fields to write,
  {'started', .., 'holdMs', ..} (holdMs only with a value), or nil when there
  is nothing to fold (decay '').
]]
--- @include "@crawlq/redis/lua/args.lua"
local function fold_releases(hold, started, decay, addend, last, sent)
  if decay == nil or decay == '' then return nil end
  local fields = {'started', num(started, 0) + tonumber(sent)}
  local old = tonumber(hold)
  local new = tonumber(last)
  if old then new = old * tonumber(decay) + tonumber(addend) end
  if new then
    fields[3] = 'holdMs'
    fields[4] = fmt(new)
  end
  return fields
end
