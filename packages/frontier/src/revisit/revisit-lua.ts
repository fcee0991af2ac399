import { luaInclude, defineLuaScript, CLOCK_INCLUDE } from '@crawlq/redis';
import { BACKLOG_INCLUDE } from '../commands/backlog-lua.js';

/**
 * Lua shared by the revisit scripts. Under the revisit prefix R (same hash tag
 * as the rest of the crawl's keys):
 *
 * - `R s:<bucket>`: per-URL state in small hashes (listpack-encoded while a
 *   bucket holds at most 128 fields of at most 64 bytes): field = the last 8
 *   bytes of the URL's 16-byte fingerprint, value = 34 packed bytes
 *   (struct `>IIIIc8IHBBH`: next due, interval, last fetch, last change, all in
 *   deciseconds since REVISIT_EPOCH; the 64-bit content signature; the
 *   Last-Modified in seconds, 0 none; the schedule generation; 404/410 misses
 *   in a row; link depth; the last full body's size in KiB) then the ETag, if any, kept only when short.
 * - `R w:<slot>`: a timing wheel of lists: entries due from `slot` (ds), each
 *   2 bytes of generation, the 16-byte fingerprint, then the URL. Near slots
 *   are 1 s wide; far ones wider (10 s, 1 min, 10 min), and an entry popped
 *   from a wide slot before it is due moves to a narrower one.
 * - `R slots`: the wheel's non-empty slots, scored by start (ds).
 * - `R n`: counters (known, fetched, changed, unchanged, notModified,
 *   bytesSaved, retired, leased).
 *
 * The state is the truth and the wheel an index: an entry whose generation
 * differs from its URL's state is stale and dropped when popped, so a URL is
 * due at exactly one time, however often it was rescheduled.
 */
export const REVISIT_INCLUDE = luaInclude(
  'revisit',
  `
local RV_FORMAT = '>IIIIc8IHBBH'
local RV_FIXED = 34
local function rv_bucket_key(prefix, fp, buckets)
  return prefix .. 's:' .. (struct.unpack('>I', fp) % buckets)
end
local function rv_field(fp)
  return string.sub(fp, 9, 16)
end
local function rv_decode(value)
  local s = {}
  s.due, s.interval, s.fetched, s.changed, s.sig, s.modified, s.gen, s.misses, s.depth, s.size = struct.unpack(RV_FORMAT, value)
  s.etag = string.sub(value, RV_FIXED + 1)
  return s
end
local function rv_encode(s)
  return struct.pack(RV_FORMAT, s.due, s.interval, s.fetched, s.changed, s.sig, s.modified, s.gen, s.misses, s.depth, s.size) .. s.etag
end
-- Slot of an entry due at 'due' (ds) scheduled at 'now': the narrow ones end
-- at or after the due time (never popped early); the wide ones start before
-- it (popped early, then moved to a narrower slot).
local function rv_slot(due, now)
  local ahead = due - now
  if ahead < 600 then return math.ceil(due / 10) * 10 end
  local width = 100
  if ahead >= 36000 then width = 6000 elseif ahead >= 6000 then width = 600 end
  return math.floor(due / width) * width
end
local function rv_index(prefix, s, fp, url, now)
  local slot = rv_slot(s.due, now)
  redis.call('RPUSH', prefix .. 'w:' .. slot, struct.pack('>H', s.gen) .. fp .. url)
  redis.call('ZADD', prefix .. 'slots', slot, slot)
end
local function rv_hex(bytes)
  return (string.gsub(bytes, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
local function rv_unhex(text)
  return (string.gsub(text, '..', function(h) return string.char(tonumber(h, 16)) end))
end
`,
);

/**
 * Records a fetch of a URL and schedules its next one, atomically: the state
 * is written with a new generation and one wheel entry is added (any older
 * entry of the URL becomes stale). A retired URL's state is deleted.
 * KEYS: 1 counters (R n)
 * ARGV: R, buckets, fingerprint (16 bytes), URL, now (ds), next due (ds),
 *       interval (ds), changed ('1'/'0'), signature (16 hex digits),
 *       Last-Modified (s, 0 none), ETag ('' none), misses, depth, retire ('1'/'0'),
 *       outcome counter to add 1 to ('' none), bytes saved
 * Reply: {1 when the URL was known before, the generation written}
 */
export const revisitRecordScript = defineLuaScript({
  name: 'revisit-record',
  keys: 1,
  includes: [REVISIT_INCLUDE],
  lua: `
local prefix, buckets, fp, url = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local now = tonumber(ARGV[5])
local key, field = rv_bucket_key(prefix, fp, buckets), rv_field(fp)
local old = redis.call('HGET', key, field)
local known = 0
local s = {gen = 0, changed = now}
if old then
  known = 1
  local o = rv_decode(old)
  s.gen = (o.gen + 1) % 65536
  s.changed = o.changed
end
if ARGV[8] == '1' then s.changed = now end
if ARGV[15] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[15], 1) end
local saved = tonumber(ARGV[16])
if saved > 0 then redis.call('HINCRBY', KEYS[1], 'bytesSaved', saved) end
redis.call('HINCRBY', KEYS[1], 'fetched', 1)
if ARGV[14] == '1' then
  if old then
    redis.call('HDEL', key, field)
    redis.call('HINCRBY', KEYS[1], 'known', -1)
  end
  redis.call('HINCRBY', KEYS[1], 'retired', 1)
  return {known, -1}
end
if not old then redis.call('HINCRBY', KEYS[1], 'known', 1) end
s.due, s.interval, s.fetched = tonumber(ARGV[6]), tonumber(ARGV[7]), now
s.sig, s.modified, s.etag = rv_unhex(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
s.misses, s.depth = math.min(255, tonumber(ARGV[12])), math.min(255, tonumber(ARGV[13]))
s.size = math.min(65535, tonumber(ARGV[17]))
redis.call('HSET', key, field, rv_encode(s))
rv_index(prefix, s, fp, url, now)
return {known, s.gen}
`,
});

/**
 * Reads a URL's state for a fetch. Reply: {} when the URL is not known (a
 * first fetch); else {due (ds), interval (ds), last fetch (ds), last change (ds),
 * signature (hex), Last-Modified (s), ETag, misses, depth}.
 * KEYS: none. ARGV: R, buckets, fingerprint (16 bytes)
 */
export const revisitReadScript = defineLuaScript({
  name: 'revisit-read',
  keys: 0,
  includes: [REVISIT_INCLUDE],
  lua: `
local value = redis.call('HGET', rv_bucket_key(ARGV[1], ARGV[3], tonumber(ARGV[2])), rv_field(ARGV[3]))
if not value then return {} end
local s = rv_decode(value)
return {s.due, s.interval, s.fetched, s.changed, rv_hex(s.sig), s.modified, s.etag, s.misses, s.depth, s.size}
`,
});

/**
 * Takes due URLs off the wheel: each is leased (its next due set to now +
 * lease, under a new generation, so a process that dies before the URL
 * reaches its backlog loses nothing: it comes due again then) and returned;
 * stale entries are dropped, early ones move to a narrower slot.
 * KEYS: 1 wheel slots (R slots), 2 counters (R n)
 * ARGV: R, buckets, now (ds), most URLs, lease (ds)
 * Reply: {url, depth, url, depth, ...}, then the ds until the next slot (-1: none)
 */
export const revisitPopScript = defineLuaScript({
  name: 'revisit-pop',
  keys: 2,
  includes: [REVISIT_INCLUDE],
  lua: `
local prefix, buckets, now, most, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local out = {}
local taken = 0
local slots = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 16)
for _, slot in ipairs(slots) do
  local list = prefix .. 'w:' .. slot
  while taken < most do
    local entry = redis.call('LPOP', list)
    if not entry then
      redis.call('ZREM', KEYS[1], slot)
      break
    end
    local gen = struct.unpack('>H', entry)
    local fp = string.sub(entry, 3, 18)
    local url = string.sub(entry, 19)
    local key, field = rv_bucket_key(prefix, fp, buckets), rv_field(fp)
    local value = redis.call('HGET', key, field)
    if value then
      local s = rv_decode(value)
      if s.gen == gen then
        if s.due > now then
          rv_index(prefix, s, fp, url, now)
        else
          s.gen = (s.gen + 1) % 65536
          s.due = now + lease
          redis.call('HSET', key, field, rv_encode(s))
          rv_index(prefix, s, fp, url, now)
          out[#out + 1] = url
          out[#out + 1] = s.depth
          taken = taken + 1
        end
      end
    end
  end
  if taken >= most then break end
end
if taken > 0 then redis.call('HINCRBY', KEYS[2], 'leased', taken) end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local next_in = -1
if first[2] then next_in = math.max(0, tonumber(first[2]) - now) end
out[#out + 1] = next_in
return out
`,
});

/**
 * Appends leased URLs to their groups' backlogs (stage one of the frontier),
 * as a redirect's target is: already seen, so no budget or dedupe applies.
 * KEYS: 1 backlog count
 * ARGV: backlog prefix, then per URL: group, depth, job id (fingerprint), URL
 */
export const revisitPushScript = defineLuaScript({
  name: 'revisit-push',
  keys: 1,
  includes: [CLOCK_INCLUDE, BACKLOG_INCLUDE],
  lua: `
local now = now_ms()
local touched = {}
local n = 0
for i = 2, #ARGV, 4 do
  backlog_push(ARGV[1], ARGV[i], tonumber(ARGV[i + 1]), backlog_entry(ARGV[i + 2], ARGV[i + 3], 0), now, touched)
  n = n + 1
end
return redis.call('INCRBY', KEYS[1], n)
`,
});

/**
 * Checks the schedule's invariant, each known URL has exactly one live wheel
 * entry (a finite due time, never two). Reads every list and bucket: for tests
 * and small crawls only.
 * Reply: {live entries, stale entries, known URLs with no live entry, URLs with two or more}
 * KEYS: 1 wheel slots. ARGV: R, buckets
 */
export const revisitAuditScript = defineLuaScript({
  name: 'revisit-audit',
  keys: 1,
  includes: [REVISIT_INCLUDE],
  lua: `
local prefix, buckets = ARGV[1], tonumber(ARGV[2])
local live, stale = {}, 0
local live_count = 0
for _, slot in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  for _, entry in ipairs(redis.call('LRANGE', prefix .. 'w:' .. slot, 0, -1)) do
    local gen = struct.unpack('>H', entry)
    local fp = string.sub(entry, 3, 18)
    local bucket = struct.unpack('>I', fp) % buckets
    local value = redis.call('HGET', prefix .. 's:' .. bucket, rv_field(fp))
    if value and rv_decode(value).gen == gen then
      local id = bucket .. ':' .. rv_field(fp)
      live[id] = (live[id] or 0) + 1
      live_count = live_count + 1
    else
      stale = stale + 1
    end
  end
end
local twice = 0
for _, n in pairs(live) do if n > 1 then twice = twice + 1 end end
local missing = 0
for b = 0, buckets - 1 do
  for _, f in ipairs(redis.call('HKEYS', prefix .. 's:' .. b)) do
    if not live[b .. ':' .. f] then missing = missing + 1 end
  end
end
return {live_count, stale, missing, twice}
`,
});
