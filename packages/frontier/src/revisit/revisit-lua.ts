import { luaInclude, defineLuaScript, CLOCK_INCLUDE } from '@crawlq/redis';
import { BACKLOG_INCLUDE } from '../lua/backlog-lua.js';

/**
 * Lua shared by the revisit scripts. Under the revisit prefix R (same hash tag
 * as the rest of the crawl's keys):
 *
 * - `R s:<bucket>`: per-URL state in small hashes, which Redis keeps in its
 *   compact listpack encoding while a bucket holds at most 128 fields and every
 *   value is at most 64 bytes (the defaults). The bucket and the field both
 *   come from SHA-1 of the URL (the scripts compute it, so a wheel entry needs
 *   no fingerprint): the bucket from its first 32 bits, the field is its next
 *   6 bytes. The value is 26 packed bytes (struct `>IHHc8HBBBBHH`):
 *     last fetch (ds since REVISIT_EPOCH), interval (f16 ds), age of the last
 *     change at the last fetch (f16 ds), the 64-bit content signature, the
 *     schedule generation, link depth, flags (bits 0-1: 404/410 misses in a
 *     row, 2-3: validator kind, 4: leased), the last full body's size (u8
 *     log code), then the change-rate estimate: changes seen (u8, 1/16ths,
 *     decayed), time watched without a change and time watched before a change
 *     (f16 ds, decayed)
 *   followed by the validator: the ETag (kind 1), or Last-Modified in seconds
 *   (kind 2, 4 bytes). A page that sends an ETag is asked with If-None-Match
 *   alone, which takes precedence over If-Modified-Since (RFC 9110 13.2.2).
 *   Flag bit 5 says 1 more byte ends the value: a hash of the page's set of
 *   links (kept only when the value stays within 64 bytes); bit 6 says the
 *   page's last change changed its links (a hub). The scripts keep both as
 *   they are: the crawler packs and reads them.
 * - `R h:<bucket>`: a revisit hint for a URL not fetched yet, same bucket and
 *   field as its state would be: its prior interval (f16 ds, 2 bytes) from a
 *   sitemap's `<changefreq>`. Read with the state by the URL's first fetch
 *   and deleted when that fetch is recorded.
 * - `R w:<slot>`: a timing wheel of lists: entries due from `slot` (ds), each
 *   the 2-byte generation and the URL. Near slots are 1 s wide; far ones
 *   wider (10 s, 1 min, 10 min), and an entry popped from a wide slot before
 *   it is due moves to a narrower one.
 * - `R a:<bucket>`: what a crawl with an archive (--warc) keeps of a URL's
 *   last archived response, same bucket and field as its state: an opaque
 *   value the crawler packs (record id, date, payload digest), so a revisit
 *   record can name it. Absent without --warc.
 * - `R slots`: the wheel's non-empty slots, scored by start (ds).
 * - `R n`: counters (known, first, changed, unchanged, notModified, gone,
 *   bytesSaved, retired, leased).
 * - `R g:<counter>`: the same counters per group (known, first, changed,
 *   unchanged, notModified, gone, bytesSaved, retired), one hash per counter
 *   whose fields are the groups: a fetch adds to its group's field in the
 *   hash of its outcome (one command), so every group's figures are read with
 *   one HGETALL per counter.
 *
 * The state is the truth and the wheel an index: an entry whose generation
 * differs from its URL's state is stale and dropped when popped, so a URL is
 * due at exactly one time, however often it was rescheduled. A URL's due
 * time is its last fetch plus its interval; a leased one (handed to its
 * backlog, not yet fetched) is due when its lease entry comes up.
 *
 * f16: a 16-bit float of deciseconds, 5 bits of exponent and 11 of mantissa
 * (1/1024 precision from 204.8 s up, exact below).
 */
export const REVISIT_INCLUDE = luaInclude(
  'revisit',
  `
local RV_FORMAT = '>IHHc8HBBBBHH'
local RV_FIXED = 26
local RV_LEASED = 16
local function rv_locate(prefix, url, buckets)
  local h = redis.sha1hex(url)
  local bucket = tonumber(string.sub(h, 1, 8), 16) % buckets
  local field = string.gsub(string.sub(h, 9, 20), '..', function(x) return string.char(tonumber(x, 16)) end)
  return prefix .. 's:' .. bucket, field, bucket
end
local function rv_f16(code)
  return (code % 2048) * (2 ^ math.floor(code / 2048))
end
-- The f16 code of 'ds', rounded up or down (as encodeF16 in revisit-store.ts).
local function rv_code(ds, up)
  local e = 0
  while ds >= 2048 and e < 31 do ds = ds / 2; e = e + 1 end
  local m = math.floor(ds)
  if up then m = math.ceil(ds) end
  return e * 2048 + math.min(2047, m)
end
local function rv_decode(value)
  local s = {}
  s.fetched, s.interval, s.age, s.sig, s.gen, s.depth, s.flags, s.size, s.x, s.t0, s.tc = struct.unpack(RV_FORMAT, value)
  s.tail = string.sub(value, RV_FIXED + 1)
  return s
end
local function rv_encode(s)
  return struct.pack(RV_FORMAT, s.fetched, s.interval, s.age, s.sig, s.gen, s.depth, s.flags, s.size, s.x, s.t0, s.tc) .. s.tail
end
local function rv_leased(s)
  return math.floor(s.flags / RV_LEASED) % 2 == 1
end
local function rv_due(s)
  return s.fetched + rv_f16(s.interval)
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
-- Adds a wheel entry; 'zadded' remembers the slots this script already
-- listed, so a batch to one slot costs one ZADD.
local function rv_index(prefix, gen, url, due, now, zadded)
  local slot = rv_slot(due, now)
  redis.call('RPUSH', prefix .. 'w:' .. slot, struct.pack('>H', gen) .. url)
  if not zadded[slot] then
    redis.call('ZADD', prefix .. 'slots', slot, slot)
    zadded[slot] = true
  end
end
local function rv_hex(bytes)
  return (string.gsub(bytes, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
`,
);

/**
 * Records a fetch of a URL and schedules its next one, atomically: the state
 * is written with a new generation and one wheel entry is added (any older
 * entry of the URL becomes stale). A retired URL's state is deleted.
 * KEYS: 1 counters (R n)
 * ARGV: R, buckets, URL, now (ds), packed state (RV_FORMAT with generation 0 and
 *       the last change's age to keep when unchanged, then the validator),
 *       changed ('1'/'0'), retire ('1'/'0'), outcome counter ('' none), bytes saved,
 *       archived response ('' keeps the one stored), the URL's group ('' counts
 *       in no group's figures)
 * Reply: {1 when the URL was known before, the generation written (-1 retired)}
 */
export const revisitRecordScript = defineLuaScript({
  name: 'revisit-record',
  keys: 1,
  includes: [REVISIT_INCLUDE],
  lua: `
local prefix, buckets, url, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local key, field, bucket = rv_locate(prefix, url, buckets)
local old = redis.call('HGET', key, field)
local archive = prefix .. 'a:' .. bucket
local group = ARGV[11] or ''
-- Adds to a fleet counter and to the group's field of that counter's per-group hash.
local function count(counter, by)
  redis.call('HINCRBY', KEYS[1], counter, by)
  if group ~= '' then redis.call('HINCRBY', prefix .. 'g:' .. counter, group, by) end
end
if ARGV[8] ~= '' then count(ARGV[8], 1) end
local saved = tonumber(ARGV[9])
if saved > 0 then count('bytesSaved', saved) end
-- The first fetch of a URL consumes its hint (a retired one's too).
if not old then redis.call('HDEL', prefix .. 'h:' .. bucket, field) end
if ARGV[7] == '1' then
  redis.call('HDEL', archive, field)
  if old then
    redis.call('HDEL', key, field)
    count('known', -1)
  end
  count('retired', 1)
  if old then return {1, -1} end
  return {0, -1}
end
local s = rv_decode(ARGV[5])
local known = 0
if old then
  known = 1
  local o = rv_decode(old)
  s.gen = (o.gen + 1) % 65536
  -- Unchanged: the last change keeps its time, so its age grows by the time since the last fetch.
  if ARGV[6] ~= '1' then
    local age = rv_f16(o.age) + math.max(0, now - o.fetched)
    local e = 0
    while age >= 2048 do age = age / 2; e = e + 1 end
    s.age = e * 2048 + math.floor(age)
  end
else
  count('known', 1)
end
redis.call('HSET', key, field, rv_encode(s))
if ARGV[10] ~= '' then redis.call('HSET', archive, field, ARGV[10]) end
rv_index(prefix, s.gen, url, rv_due(s), now, {})
return {known, s.gen}
`,
});

/**
 * Reads a URL's state for a fetch. Reply: {} when the URL is not known (a
 * first fetch), {its hint (hex)} when it is not known but has a hint (see
 * `R h:`); else {last fetch (ds), interval (f16), change age (f16),
 * signature (hex), generation, depth, flags, size code, changes (1/16),
 * unchanged time (f16), changed time (f16), validator bytes, archived
 * response (hex, '' none)}.
 * KEYS: none. ARGV: R, buckets, URL
 */
export const revisitReadScript = defineLuaScript({
  name: 'revisit-read',
  keys: 0,
  includes: [REVISIT_INCLUDE],
  lua: `
local key, field, bucket = rv_locate(ARGV[1], ARGV[3], tonumber(ARGV[2]))
local value = redis.call('HGET', key, field)
if not value then
  local hint = redis.call('HGET', ARGV[1] .. 'h:' .. bucket, field)
  if hint then return {rv_hex(hint)} end
  return {}
end
local s = rv_decode(value)
local archived = redis.call('HGET', ARGV[1] .. 'a:' .. bucket, field) or ''
return {s.fetched, s.interval, s.age, rv_hex(s.sig), s.gen, s.depth, s.flags, s.size, s.x, s.t0, s.tc, rv_hex(s.tail), rv_hex(archived)}
`,
});

/**
 * Applies revisit hints (a sitemap's) to URLs, atomically per URL:
 * - a known URL whose hinted last change (ds, the caller has made a future
 *   one now) is newer than its last fetch, and that is not leased, becomes due
 *   at now, or once its minimum interval since that fetch has passed: its
 *   interval is shortened to that (rounded down unless the minimum binds, then
 *   up: never due before it) and a wheel entry added with a new generation;
 * - a URL with no state gets its prior interval stored in `R h:` for its
 *   first fetch (the caller passes one only for URLs it just admitted).
 * KEYS: none
 * ARGV: R, buckets, now (ds), then per URL: URL, last change (ds, '' none),
 *       minimum interval (ds), prior interval (f16 code, '' none)
 * Reply: the number of URLs made due
 */
export const revisitHintScript = defineLuaScript({
  name: 'revisit-hint',
  keys: 0,
  includes: [REVISIT_INCLUDE],
  lua: `
local prefix, buckets, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local zadded = {}
local made_due = 0
for i = 4, #ARGV, 4 do
  local url, changed, min, prior = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local key, field, bucket = rv_locate(prefix, url, buckets)
  local value = redis.call('HGET', key, field)
  if value then
    if changed ~= '' then
      local s = rv_decode(value)
      if tonumber(changed) > s.fetched and not rv_leased(s) then
        local target = math.max(now, s.fetched + min)
        if rv_due(s) > target then
          local gap = target - s.fetched
          local code = rv_code(gap, false)
          if rv_f16(code) < min then code = rv_code(gap, true) end
          s.interval = code
          s.gen = (s.gen + 1) % 65536
          redis.call('HSET', key, field, rv_encode(s))
          rv_index(prefix, s.gen, url, rv_due(s), now, zadded)
          made_due = made_due + 1
        end
      end
    end
  elseif prior ~= '' then
    redis.call('HSET', prefix .. 'h:' .. bucket, field, struct.pack('>H', tonumber(prior)))
  end
end
return made_due
`,
});

/**
 * Takes due URLs off the wheel: each is leased (flagged, with a new
 * generation and a wheel entry at now + lease, so a process that dies before
 * the URL reaches its backlog loses nothing: it comes due again then) and
 * returned; stale entries are dropped, early ones move to a narrower slot.
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
local zadded = {}
local slots = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 16)
for _, slot in ipairs(slots) do
  local list = prefix .. 'w:' .. slot
  local entries = redis.call('LPOP', list, most - taken)
  if not entries or #entries < most - taken then
    -- The slot is empty now (an entry moved back to it this call is listed again by rv_index).
    redis.call('ZREM', KEYS[1], slot)
  end
  for _, entry in ipairs(entries or {}) do
    local gen = struct.unpack('>H', entry)
    local url = string.sub(entry, 3)
    local key, field = rv_locate(prefix, url, buckets)
    local value = redis.call('HGET', key, field)
    if value then
      local s = rv_decode(value)
      if s.gen == gen then
        if not rv_leased(s) and rv_due(s) > now then
          rv_index(prefix, s.gen, url, rv_due(s), now, zadded)
        else
          s.gen = (s.gen + 1) % 65536
          if not rv_leased(s) then s.flags = s.flags + RV_LEASED end
          redis.call('HSET', key, field, rv_encode(s))
          rv_index(prefix, s.gen, url, now + lease, now, zadded)
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
local n = 0
for i = 2, #ARGV, 4 do
  backlog_push(ARGV[1], ARGV[i], tonumber(ARGV[i + 1]), backlog_entry(ARGV[i + 2], ARGV[i + 3], 0), now_ms)
  n = n + 1
end
return redis.call('INCRBY', KEYS[1], n)
`,
});

/**
 * Wheel entries due by now and by now + horizon: one pass over the slots up
 * to the horizon (one LLEN each), inside Redis.
 * KEYS: 1 wheel slots. ARGV: R, now (ds), horizon end (ds)
 * Reply: {due now, due by the horizon}
 */
export const revisitDueScript = defineLuaScript({
  name: 'revisit-due',
  keys: 1,
  lua: `
local now, horizon = tonumber(ARGV[2]), tonumber(ARGV[3])
local due_now, due_soon = 0, 0
local slots = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', horizon, 'WITHSCORES')
for i = 1, #slots, 2 do
  local n = redis.call('LLEN', ARGV[1] .. 'w:' .. slots[i])
  due_soon = due_soon + n
  if tonumber(slots[i + 1]) <= now then due_now = due_now + n end
end
return {due_now, due_soon}
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
    local key, field, bucket = rv_locate(prefix, string.sub(entry, 3), buckets)
    local value = redis.call('HGET', key, field)
    if value and rv_decode(value).gen == gen then
      local id = bucket .. ':' .. field
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
