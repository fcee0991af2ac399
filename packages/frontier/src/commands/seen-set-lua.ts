import { SeenScriptStatus } from './seen-script-status.js';

/**
 * ARGV slots every seen-set script starts with (the configured mode), in order:
 * mode ('exact' | 'bloom'), bits, hashes, partBits, expectedUrls, falsePositiveRate.
 * Bloom numbers are 0 in exact mode. Script-specific arguments follow.
 */
export const SEEN_CONFIG_ARGS = 6;

/**
 * Exact mode splits a bucket once the buckets hold this many fingerprints on
 * average. Linear hashing leaves the not-yet-split buckets of a round with up
 * to twice the average, so 40 keeps almost every bucket under Redis' default
 * `hash-max-listpack-entries` (128), where a hash is one compact listpack.
 */
export const EXACT_BUCKET_LOAD = 40;

/**
 * Lua shared by the seen-set scripts. KEYS[1] is the seen-set's meta hash; the
 * data keys hang off its name (same hash tag, so one Redis Cluster slot):
 *
 * - exact: fingerprints (16 raw bytes) are fields of small hashes
 *   `<meta>:x:<bucket>` with value '' (or the owner of a claim). Buckets grow by
 *   linear hashing on the first 4 bytes: `level` and `split` in the meta hash
 *   say how many exist (2^level + split); each insert past
 *   EXACT_BUCKET_LOAD per bucket splits one bucket in two. So a hash stays a
 *   listpack (about 20 bytes per entry) whatever the crawl's size, where a big
 *   SET costs about 70.
 * - bloom: `hashes` bits per fingerprint in bitmaps `<meta>:b:<part>` of
 *   `partBits` bits, at positions from enhanced double hashing of bytes 1-6
 *   and 7-12 (48 bits each, exact in Lua's doubles).
 *
 * The stored geometry wins over the caller's (a worker started with other
 * numbers must still read the same bits); only a different mode is refused.
 * Defines: seen_open(), seen_has(s, fp), seen_get(s, fp), seen_add(s, fp, value),
 * seen_save(s), seen_mismatch(stored).
 */
export const SEEN_SET_LUA = `
local SEEN_META = KEYS[1]
local SEEN_LOAD = ${EXACT_BUCKET_LOAD}

local function seen_mismatch(stored)
  return {${SeenScriptStatus.ModeMismatch}, stored}
end

local function seen_open()
  local s = {
    mode = ARGV[1], bits = tonumber(ARGV[2]), hashes = tonumber(ARGV[3]), part_bits = tonumber(ARGV[4]),
    expected = ARGV[5], fpr = ARGV[6], level = 0, split = 0, count = 0, fresh = true, dirty = false,
  }
  local kind = redis.call('TYPE', SEEN_META).ok
  if kind == 'none' then return s end
  if kind ~= 'hash' then return nil, 'a Redis ' .. kind .. ' (an older crawlq layout)' end
  local h = redis.call('HMGET', SEEN_META, 'mode', 'level', 'split', 'count', 'bits', 'hashes', 'partBits')
  if h[1] ~= s.mode then return nil, "'" .. tostring(h[1]) .. "'" end
  s.fresh = false
  s.count = tonumber(h[4]) or 0
  if s.mode == 'exact' then
    s.level = tonumber(h[2]) or 0
    s.split = tonumber(h[3]) or 0
  else
    s.bits = tonumber(h[5])
    s.hashes = tonumber(h[6])
    s.part_bits = tonumber(h[7])
  end
  return s
end

local function seen_save(s)
  if s.fresh then
    if s.mode == 'exact' then
      redis.call('HSET', SEEN_META, 'mode', 'exact', 'level', s.level, 'split', s.split, 'count', s.count)
    else
      redis.call('HSET', SEEN_META, 'mode', 'bloom', 'bits', string.format('%d', s.bits), 'hashes', s.hashes,
        'partBits', string.format('%d', s.part_bits), 'expectedUrls', s.expected, 'falsePositiveRate', s.fpr, 'count', s.count)
    end
  elseif s.dirty then
    if s.mode == 'exact' then
      redis.call('HSET', SEEN_META, 'level', s.level, 'split', s.split, 'count', s.count)
    else
      redis.call('HSET', SEEN_META, 'count', s.count)
    end
  end
end

-- exact ---------------------------------------------------------------------

local function exact_hash(fp)
  local a, b, c, d = string.byte(fp, 1, 4)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

local function exact_key(bucket)
  return SEEN_META .. ':x:' .. string.format('%d', bucket)
end

local function exact_bucket(s, h)
  local size = 2 ^ s.level
  local bucket = h % size
  if bucket < s.split then bucket = h % (size * 2) end
  return bucket
end

local function exact_hset_all(key, pairs_list)
  -- unpack() has a stack limit; buckets are small, but stay safe.
  for i = 1, #pairs_list, 1000 do
    redis.call('HSET', key, unpack(pairs_list, i, math.min(i + 999, #pairs_list)))
  end
end

-- Linear hashing: bucket 'split' moves the entries whose next hash bit is set
-- to bucket split + 2^level. The kept half is rewritten too, so a bucket that
-- ever outgrew the listpack limit becomes a compact listpack again.
local function exact_split_one(s)
  local size = 2 ^ s.level
  local old = exact_key(s.split)
  local entries = redis.call('HGETALL', old)
  local keep, move = {}, {}
  for i = 1, #entries, 2 do
    local target = keep
    if exact_hash(entries[i]) % (size * 2) >= size then target = move end
    target[#target + 1] = entries[i]
    target[#target + 1] = entries[i + 1]
  end
  if #move > 0 then
    redis.call('DEL', old)
    exact_hset_all(old, keep)
    exact_hset_all(exact_key(s.split + size), move)
  end
  s.split = s.split + 1
  if s.split >= size then
    s.level = s.level + 1
    s.split = 0
  end
end

local function exact_grow(s)
  while s.count > SEEN_LOAD * (2 ^ s.level + s.split) do exact_split_one(s) end
end

-- bloom ---------------------------------------------------------------------

-- Positions from enhanced double hashing: h1 + i*h2 + (i^3 - i)/6 (mod m), which
-- stays far below 2^53, so Lua's doubles compute it exactly.
local function bloom_seeds(s, fp)
  local b = {string.byte(fp, 1, 12)}
  local h1 = ((((b[1] * 256 + b[2]) * 256 + b[3]) * 256 + b[4]) * 256 + b[5]) * 256 + b[6]
  local h2 = ((((b[7] * 256 + b[8]) * 256 + b[9]) * 256 + b[10]) * 256 + b[11]) * 256 + b[12]
  return h1 % s.bits, h2 % s.bits
end

local function bloom_bit(s, h1, h2, i)
  local pos = (h1 + i * h2 + (i * i * i - i) / 6) % s.bits
  local part = math.floor(pos / s.part_bits)
  return SEEN_META .. ':b:' .. string.format('%d', part), string.format('%d', pos - part * s.part_bits)
end

local function bloom_has(s, fp)
  local h1, h2 = bloom_seeds(s, fp)
  for i = 0, s.hashes - 1 do
    local key, offset = bloom_bit(s, h1, h2, i)
    if redis.call('GETBIT', key, offset) == 0 then return false end
  end
  return true
end

local function bloom_add(s, fp)
  local h1, h2 = bloom_seeds(s, fp)
  local changed = false
  for i = 0, s.hashes - 1 do
    local key, offset = bloom_bit(s, h1, h2, i)
    if redis.call('SETBIT', key, offset, 1) == 0 then changed = true end
  end
  return changed
end

-- mode-independent ----------------------------------------------------------

local function seen_has(s, fp)
  if s.fresh then return false end
  if s.mode == 'exact' then
    return redis.call('HEXISTS', exact_key(exact_bucket(s, exact_hash(fp))), fp) == 1
  end
  return bloom_has(s, fp)
end

-- The stored value (exact) or true (bloom) when present, false otherwise.
local function seen_get(s, fp)
  if s.fresh then return false end
  if s.mode == 'exact' then
    return redis.call('HGET', exact_key(exact_bucket(s, exact_hash(fp))), fp)
  end
  return bloom_has(s, fp)
end

-- Adds fp unless present (an existing value is kept); true when it was new.
local function seen_add(s, fp, value)
  local added
  if s.mode == 'exact' then
    added = redis.call('HSETNX', exact_key(exact_bucket(s, exact_hash(fp))), fp, value) == 1
    if added then
      s.count = s.count + 1
      exact_grow(s)
    end
  else
    added = bloom_add(s, fp)
    if added then s.count = s.count + 1 end
  end
  if added then s.dirty = true end
  return added
end
`;
