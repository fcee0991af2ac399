--[[
  frontier-grant-pages:
  Grants a shard of a crawl with --max-pages more of the crawl-wide budget:
  each shard admits against its own grant (its scripts reach only its own
  slot), and the crawl's grants never add up to more than the budget.
  Reply: {the shard's grants in total, given before or now; given now}. The
  shard's next admission stores the total if it holds less, so a process
  that dies between the two steps loses no grant.
  KEYS[1] the crawl's grants (a hash: `total`, and one field per shard)
  ARGV[1] shard index
  ARGV[2] pages wanted
  ARGV[3] maxPages
]]
local give = math.min(tonumber(ARGV[2]), tonumber(ARGV[3]) - tonumber(redis.call('HGET', KEYS[1], 'total') or '0'))
if give > 0 then
  redis.call('HINCRBY', KEYS[1], 'total', give)
  return {redis.call('HINCRBY', KEYS[1], ARGV[1], give), give}
end
return {tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0'), 0}
