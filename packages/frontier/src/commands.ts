/**
 * Picks which candidates are new and within the page budgets, and counts them
 * against the budgets, in one atomic step. It does not mark them seen: the
 * caller adds the jobs first and marks them after, so a worker killed in
 * between leaves the URLs unmarked (fetched again at worst), never lost.
 *
 * KEYS: seen, admitted, admittedPerGroup
 * ARGV: maxPages (0 = none), maxPagesPerGroup (0 = none), then pairs fp, group
 * Returns one code per candidate: 1 admitted, 0 duplicate, -1 over max-pages,
 * -2 over max-pages-per-group.
 */
export const RESERVE_SCRIPT = `
local maxPages = tonumber(ARGV[1])
local maxPerGroup = tonumber(ARGV[2])
local admitted = tonumber(redis.call('GET', KEYS[2]) or '0')
local result = {}
local n = 0
for i = 3, #ARGV, 2 do
  n = n + 1
  local fp = ARGV[i]
  local group = ARGV[i + 1]
  if redis.call('SISMEMBER', KEYS[1], fp) == 1 then
    result[n] = 0
  elseif maxPages > 0 and admitted >= maxPages then
    result[n] = -1
  elseif maxPerGroup > 0 and tonumber(redis.call('HGET', KEYS[3], group) or '0') >= maxPerGroup then
    result[n] = -2
  else
    admitted = admitted + 1
    if maxPerGroup > 0 then redis.call('HINCRBY', KEYS[3], group, 1) end
    result[n] = 1
  end
end
redis.call('SET', KEYS[2], admitted)
return result
`;

/** Codes RESERVE_SCRIPT returns per candidate. */
export const ReserveCode = {
  OverGroupLimit: -2,
  OverPageLimit: -1,
  Duplicate: 0,
  Admitted: 1,
} as const;
