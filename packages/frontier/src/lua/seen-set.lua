--[[
  seen-set (include):
  Lua shared by the seen-set scripts. KEYS[1] is the seen-set's meta hash; the
  data keys hang off its name (same hash tag, so one Redis Cluster slot):

  - exact: fingerprints (16 raw bytes) are fields of small hashes
    `<meta>:x:<bucket>` with value '' (or the owner of a claim). Buckets grow by
    linear hashing on the first 4 bytes: `level` and `split` in the meta hash
    say how many exist (2^level + split); each insert past
    SEEN_LOAD per bucket splits one bucket in two. So a hash stays a
    listpack (about 20 bytes per entry) whatever the crawl's size, where a big
    SET costs about 70.
  - bloom: a blocked Bloom filter in bitmaps `<meta>:b:<part>` of `partBits`
    bits: all `hashes` bits of a fingerprint lie in one block of
    BLOOM_BLOCK bits, so a lookup is one GETRANGE and an insert one more
    SETRANGE (one call per bit would cost several times as much).

  The stored geometry wins over the caller's (a worker started with other
  numbers must still read the same bits); only a different mode is refused.
  Defines: seen_open(), seen_has_many(s, fps), seen_get(s, fp),
  seen_add_many(s, fps, value), seen_save(s), seen_mismatch(stored).
]]
local SEEN_META = KEYS[1]
-- Exact mode splits a bucket once the buckets hold this many fingerprints on
-- average. Linear hashing leaves the not-yet-split buckets of a round with up
-- to twice the average, so 40 keeps almost every bucket under Redis' default
-- hash-max-listpack-entries (128), where a hash is one compact listpack.
local SEEN_LOAD = 40
-- BLOOM_BLOCK_BITS (seen-set-mode.ts), which sizes the filter's parts.
local BLOOM_BLOCK = 512

local function seen_mismatch(stored)
  return {2, stored}
end

local function seen_shape(s)
  if s.mode == 'bloom' then
    s.blocks = s.bits / BLOOM_BLOCK
    s.part_blocks = s.part_bits / BLOOM_BLOCK
  end
  return s
end

local function seen_open()
  local s = {
    mode = ARGV[1], bits = tonumber(ARGV[2]), hashes = tonumber(ARGV[3]), part_bits = tonumber(ARGV[4]),
    expected = ARGV[5], fpr = ARGV[6], level = 0, split = 0, count = 0, fresh = true, dirty = false, ready = {}, keys = {},
  }
  -- No TYPE first (every admission opens the set): only a key of another type makes HMGET fail.
  local h = redis.pcall('HMGET', SEEN_META, 'mode', 'level', 'split', 'count', 'bits', 'hashes', 'partBits', 'blockBits')
  if h.err then return nil, 'a Redis ' .. redis.call('TYPE', SEEN_META).ok .. ' (an older crawlq layout)' end
  if h[1] == false then return seen_shape(s) end
  if h[1] ~= s.mode then return nil, "'" .. tostring(h[1]) .. "'" end
  if s.mode == 'bloom' and tonumber(h[8]) ~= BLOOM_BLOCK then
    return nil, "'bloom' with blocks of " .. tostring(h[8]) .. ' bits (another crawlq version)'
  end
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
  return seen_shape(s)
end

local function seen_save(s)
  if s.fresh then
    if s.mode == 'exact' then
      redis.call('HSET', SEEN_META, 'mode', 'exact', 'level', s.level, 'split', s.split, 'count', s.count)
    else
      redis.call('HSET', SEEN_META, 'mode', 'bloom', 'bits', string.format('%d', s.bits), 'hashes', s.hashes,
        'partBits', string.format('%d', s.part_bits), 'blockBits', BLOOM_BLOCK, 'expectedUrls', s.expected,
        'falsePositiveRate', s.fpr, 'count', s.count)
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

-- Lua prints numbers with %.14g: integer digits for every bucket number (< 2^32).
local function exact_key(bucket)
  return SEEN_META .. ':x:' .. bucket
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
-- Hot loops: plain arithmetic instead of math.floor / bit.band calls, which
-- cost several times more in Lua 5.1.

-- SETBIT numbers bits from the most significant bit of each byte.
local BLOOM_MASK = {128, 64, 32, 16, 8, 4, 2, 1}
local BLOOM_TRIANGLE = {}
for i = 0, 63 do BLOOM_TRIANGLE[i] = i * (i - 1) / 2 end

-- A URL's block comes from bytes 1-6 (48 bits, exact in Lua's doubles); its k
-- bits within the block from triple hashing of bytes 7-8, 9-10 and 11-12:
-- h1 + i*h2 + i(i-1)/2*h3 (mod block), h2 odd so it is coprime with the block
-- size. Double hashing alone would allow only block * block/2 bit patterns: two
-- URLs of a block would share all k bits about 1 time in 2^17, which alone
-- would add a quarter to a 0.001 false-positive rate.
local function bloom_locate(s, fp)
  local b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12 = string.byte(fp, 1, 12)
  local block = (((((b1 * 256 + b2) * 256 + b3) * 256 + b4) * 256 + b5) * 256 + b6) % s.blocks
  local offset = block % s.part_blocks
  local part = (block - offset) / s.part_blocks
  local key = s.keys[part]
  if not key then
    key = SEEN_META .. ':b:' .. string.format('%d', part)
    s.keys[part] = key
  end
  local h2 = (b9 * 256 + b10) % BLOOM_BLOCK
  if h2 % 2 == 0 then h2 = h2 + 1 end
  return key, offset * BLOOM_BLOCK, (b7 * 256 + b8) % BLOOM_BLOCK, h2, (b11 * 256 + b12) % BLOOM_BLOCK
end

local function bloom_block(key, first)
  return redis.call('GETRANGE', key, first / 8, (first + BLOOM_BLOCK) / 8 - 1)
end

local function bloom_has(s, fp)
  local key, first, h1, h2, h3 = bloom_locate(s, fp)
  local block = bloom_block(key, first)
  -- A part never written reads as '' (all zero).
  if block == '' then return false end
  for i = 0, s.hashes - 1 do
    local pos = (h1 + i * h2 + BLOOM_TRIANGLE[i] * h3) % BLOOM_BLOCK
    local low = pos % 8
    local mask = BLOOM_MASK[low + 1]
    if string.byte(block, (pos - low) / 8 + 1) % (mask + mask) < mask then return false end
  end
  return true
end

-- Sets the URL's bits; true when one of them was 0 (the URL was new).
local function bloom_add(s, fp)
  local key, first, h1, h2, h3 = bloom_locate(s, fp)
  if not s.ready[key] then
    -- A part is allocated whole on first write: a new string is sized exactly,
    -- while one grown bit by bit may reserve up to twice its size (or 1 MB more).
    if redis.call('EXISTS', key) == 0 then redis.call('SETBIT', key, s.part_bits - 1, 0) end
    s.ready[key] = true
  end
  -- The block is rewritten whole with one SETRANGE: far cheaper than one
  -- SETBIT call, or one BITFIELD operation, per bit.
  local bytes = {string.byte(bloom_block(key, first), 1, -1)}
  local changed = false
  for i = 0, s.hashes - 1 do
    local pos = (h1 + i * h2 + BLOOM_TRIANGLE[i] * h3) % BLOOM_BLOCK
    local low = pos % 8
    local mask = BLOOM_MASK[low + 1]
    local index = (pos - low) / 8 + 1
    if bytes[index] % (mask + mask) < mask then
      bytes[index] = bytes[index] + mask
      changed = true
    end
  end
  if changed then redis.call('SETRANGE', key, first / 8, string.char(unpack(bytes))) end
  return changed
end

-- mode-independent ----------------------------------------------------------

-- seen[j] is true when fps[j] was seen (bloom: or is a false positive).
local function seen_has_many(s, fps)
  local seen = {}
  -- A set that did not exist holds only what this script added (dirty).
  if s.fresh and not s.dirty then
    for j = 1, #fps do seen[j] = false end
  elseif s.mode == 'exact' then
    for j = 1, #fps do
      seen[j] = redis.call('HEXISTS', exact_key(exact_bucket(s, exact_hash(fps[j]))), fps[j]) == 1
    end
  else
    for j = 1, #fps do seen[j] = bloom_has(s, fps[j]) end
  end
  return seen
end

-- The stored value (exact) or true (bloom) when present, false otherwise.
local function seen_get(s, fp)
  if s.fresh then return false end
  if s.mode == 'exact' then
    return redis.call('HGET', exact_key(exact_bucket(s, exact_hash(fp))), fp)
  end
  return seen_has_many(s, {fp})[1]
end

-- Adds each fingerprint unless present (an existing value is kept);
-- added[j] is true when fps[j] was new.
local function seen_add_many(s, fps, value)
  local added = {}
  if s.mode == 'exact' then
    for j = 1, #fps do
      added[j] = redis.call('HSETNX', exact_key(exact_bucket(s, exact_hash(fps[j]))), fps[j], value) == 1
      if added[j] then
        s.count = s.count + 1
        exact_grow(s)
      end
    end
  else
    for j = 1, #fps do
      added[j] = bloom_add(s, fps[j])
      if added[j] then s.count = s.count + 1 end
    end
  end
  s.dirty = true
  return added
end
