--[[
  crawl-stats-add:
  Adds the counts in one step (no reader sees half of them, and a write
  whose connection dropped applied all or none), as the MULTI it replaces
  did, for one command less per write: a wide polite crawl writes its
  counters about every other page.
  KEYS[1] the counters hash
  ARGV[2i-1], ARGV[2i] a field and the amount to add to it (i = 1..)
  Reply: 1
]]
for i = 1, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
