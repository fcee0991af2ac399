--[[
  revisit (include):
  Lua shared by the revisit scripts. Under the revisit prefix R (same hash tag
  as the rest of the crawl's keys):

  - `R s:<bucket>`: per-URL state in small hashes, which Redis keeps in its
    compact listpack encoding while a bucket holds at most 128 fields and every
    value is at most 64 bytes (the defaults). The bucket and the field both
    come from SHA-1 of the URL (the scripts compute it, so a wheel entry needs
    no fingerprint): the bucket from its first 32 bits, the field is its next
    6 bytes. The value is 26 packed bytes (struct `>IHHc8HBBBBHH`):
      last fetch (ds since REVISIT_EPOCH), interval (f16 ds), age of the last
      change at the last fetch (f16 ds), the 64-bit content signature, the
      schedule generation, link depth, flags (bits 0-1: 404/410 misses in a
      row, 2-3: validator kind, 4: leased), the last full body's size (u8
      log code), then the change-rate estimate: changes seen (u8, 1/16ths,
      decayed), time watched without a change and time watched before a change
      (f16 ds, decayed)
    followed by the validator: the ETag (kind 1), or Last-Modified in seconds
    (kind 2, 4 bytes). A page that sends an ETag is asked with If-None-Match
    alone, which takes precedence over If-Modified-Since (RFC 9110 13.2.2).
    Flag bit 5 says 1 more byte ends the value: a hash of the page's set of
    links (kept only when the value stays within 64 bytes); bit 6 says the
    page's last change changed its links (a hub). The scripts keep both as
    they are: the crawler packs and reads them.
  - `R h:<bucket>`: a revisit hint for a URL not fetched yet, same bucket and
    field as its state would be: its prior interval (f16 ds, 2 bytes) from a
    sitemap's `<changefreq>`. Read with the state by the URL's first fetch
    and deleted when that fetch is recorded.
  - `R w:<slot>`: a timing wheel of lists: entries due from `slot` (ds), each
    the 2-byte generation and the URL. Near slots are 1 s wide; far ones
    wider (10 s, 1 min, 10 min), and an entry popped from a wide slot before
    it is due moves to a narrower one.
  - `R a:<bucket>`: what a crawl with an archive (--warc) keeps of a URL's
    last archived response, same bucket and field as its state: an opaque
    value the crawler packs (record id, date, payload digest), so a revisit
    record can name it. Absent without --warc.
  - `R slots`: the wheel's non-empty slots, scored by start (ds).
  - `R n`: counters (known, first, changed, unchanged, notModified, gone,
    bytesSaved, retired, leased).
  - `R g:<counter>`: the same counters per group (known, first, changed,
    unchanged, notModified, gone, bytesSaved, retired), one hash per counter
    whose fields are the groups: a fetch adds to its group's field in the
    hash of its outcome (one command), so every group's figures are read with
    one HGETALL per counter.

  The state is the truth and the wheel an index: an entry whose generation
  differs from its URL's state is stale and dropped when popped, so a URL is
  due at exactly one time, however often it was rescheduled. A URL's due
  time is its last fetch plus its interval; a leased one (handed to its
  backlog, not yet fetched) is due when its lease entry comes up.

  f16: a 16-bit float of deciseconds, 5 bits of exponent and 11 of mantissa
  (1/1024 precision from 204.8 s up, exact below).
]]
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
