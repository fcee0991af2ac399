import type { RedisClient } from '@crawlq/redis';
import { FrontierError } from '../errors.js';
import { revisitAuditScript, revisitDueScript, revisitHintScript, revisitPopScript, revisitPushScript, revisitReadScript, revisitRecordScript } from './revisit-lua.js';
import { revisitKeys, type RevisitKeys } from './revisit-keys.js';

/** Times in the revisit state count deciseconds from here (a u32 lasts 13 years). */
export const REVISIT_EPOCH_MS = Date.UTC(2024, 0, 1);
/**
 * ETags longer than this are not kept (the state value stays within the 64
 * bytes Redis keeps in a compact hash); Last-Modified and the signature still
 * apply. 38 bytes hold a quoted MD5 (S3, many CDNs).
 */
export const MAX_STORED_ETAG = 38;
/** Largest state value: what Redis keeps in a compact (listpack) hash by default (`hash-max-listpack-value`). */
const MAX_STATE_BYTES = 64;
/** Bytes of the link-set hash (see RevisitRecord.links): one keeps a known URL within 64 bytes of Redis memory, two would not. */
const LINKS_BYTES = 1;
/** URLs per bucket the bucket count is sized for: well under Redis' 128-field listpack limit. */
const BUCKET_LOAD = 64;
/** Bytes of the packed fixed part of a URL's state (see `revisit.lua`). */
const FIXED_BYTES = 26;
const VALIDATOR_NONE = 0;
const VALIDATOR_ETAG = 1;
const VALIDATOR_LAST_MODIFIED = 2;
const LEASED_FLAG = 16;
/** The value ends with the link-set hash. */
const LINKS_FLAG = 32;
/** The page's last change changed its links. */
const HUB_FLAG = 64;

/**
 * A URL's change history as the adaptive policy keeps it (decayed sums):
 * changes seen, time watched across visits that found no change, and time
 * across visits that found one.
 */
export interface ChangeEstimate {
  readonly changes: number;
  readonly unchangedMs: number;
  readonly changedMs: number;
}

/** What the schedule holds for one known URL. */
export interface RevisitState {
  /** When it is due (last fetch plus interval); undefined while leased (handed to its backlog, not yet fetched again). */
  readonly dueAt: number | undefined;
  readonly intervalMs: number;
  readonly fetchedAt: number;
  /** When its content was last seen to change (about: kept as an age, 1/1024 precision). */
  readonly changedAt: number;
  /** 64-bit content signature, 16 hex digits. */
  readonly signature: string;
  /** The page's Last-Modified (ms), kept when it sent no (short enough) ETag. */
  readonly lastModified: number | undefined;
  readonly etag: string | undefined;
  /** 404/410 answers in a row (at most 3). */
  readonly misses: number;
  readonly depth: number;
  /** The last full body's size (bytes, within 5%): what a 304 saves. */
  readonly bodyBytes: number;
  readonly leased: boolean;
  readonly estimate: ChangeEstimate;
  /** What a crawl with an archive keeps of the URL's last archived response (see RevisitRecord.archived); undefined: none. */
  readonly archived: Buffer | undefined;
  /** The hash of the page's set of links at its last change (see RevisitRecord.links); undefined: none kept. */
  readonly links: number | undefined;
  /** The page's last change changed its links (see RevisitRecord.hub). */
  readonly hub: boolean;
}

/** A URL's state for a fetch, or the hint its first fetch starts from. */
export interface RevisitLookup {
  /** Undefined: the URL is not known (never fetched, or retired). */
  readonly state: RevisitState | undefined;
  /** A prior interval for a URL not known yet (a sitemap's `<changefreq>`, see RevisitStore.hint), ms; undefined: none. */
  readonly priorMs: number | undefined;
}

/** What a sitemap says of one (normalised) URL, for RevisitStore.hint. */
export interface RevisitHint {
  readonly url: string;
  /** When the page last changed (its `<lastmod>`, ms; one in the future counts as now): a known URL fetched before it is due again. */
  readonly lastModified?: number | undefined;
  /** The URL's shortest interval (its policy's minimum): one made due by `lastModified` is not fetched sooner after its last fetch. */
  readonly minIntervalMs: number;
  /** A prior interval for a URL not fetched yet (its `<changefreq>`), ms; kept for its first fetch. Give it only for a URL just admitted. */
  readonly priorMs?: number | undefined;
}

/** What to store after a fetch of a URL (due again at now + intervalMs). */
export interface RevisitRecord {
  readonly url: string;
  readonly now: number;
  readonly intervalMs: number;
  readonly changed: boolean;
  readonly signature: string;
  readonly lastModified: number | undefined;
  readonly etag: string | undefined;
  readonly misses: number;
  readonly depth: number;
  /** Gone for good: the state is deleted and the URL never comes due again. */
  readonly retire: boolean;
  /** The counter this fetch adds to. */
  readonly outcome: 'first' | 'changed' | 'unchanged' | 'notModified' | 'gone';
  /** Body bytes a 304 did not send (the last full body's size). */
  readonly bytesSaved: number;
  /** The last full body's size (bytes). */
  readonly bodyBytes: number;
  /** The change history after this fetch (adaptive policy); zeros when unused. */
  readonly estimate?: ChangeEstimate;
  /**
   * The response this fetch archived, for a later revisit record to name
   * (opaque to the schedule; keep it within 64 bytes so Redis keeps its
   * hash compact). Absent: the one stored stays; a retired URL loses it.
   */
  readonly archived?: Uint8Array;
  /**
   * An 8-bit hash (0-255) of the page's set of links (see the crawler's link
   * sets), compared at its next change to tell a hub. Kept only while the
   * state value stays within 64 bytes: dropped beside an ETag of 38 bytes.
   */
  readonly links?: number | undefined;
  /** The page's last change changed its links (a hub). */
  readonly hub?: boolean | undefined;
  /** The URL's politeness group: its outcome also counts in that group's figures (see readRevisitGroups). Absent: in the fleet's only. */
  readonly group?: string | undefined;
}

/** The fleet's revisit counters (one shard's, or summed). */
export interface RevisitCounters {
  /** URLs with a schedule (fetched at least once, not retired). */
  readonly known: number;
  /** Fetches recorded (the sum of first, changed, unchanged, notModified and gone). */
  readonly fetched: number;
  /** Fetches that found the page new (first fetch of the URL). */
  readonly first: number;
  readonly changed: number;
  /** 200 with the same content signature as before. */
  readonly unchanged: number;
  /** 304 Not Modified. */
  readonly notModified: number;
  /** 404/410 answers. */
  readonly gone: number;
  /** Body bytes 304 answers did not send (each the last full body's size, within 5%). */
  readonly bytesSaved: number;
  readonly retired: number;
  /** Due URLs handed to the backlogs. */
  readonly leased: number;
}

const STORED_COUNTERS = ['known', 'first', 'changed', 'unchanged', 'notModified', 'gone', 'bytesSaved', 'retired', 'leased'] as const;
const COUNTER_FIELDS = ['fetched', ...STORED_COUNTERS] as const;

export function emptyRevisitCounters(): RevisitCounters {
  return { known: 0, fetched: 0, first: 0, changed: 0, unchanged: 0, notModified: 0, gone: 0, bytesSaved: 0, retired: 0, leased: 0 };
}

export function addRevisitCounters(a: RevisitCounters, b: RevisitCounters): RevisitCounters {
  const sum: Record<(typeof COUNTER_FIELDS)[number], number> = { ...a };
  for (const field of COUNTER_FIELDS) sum[field] = a[field] + b[field];
  return sum;
}

/** A bucket count for a shard expected to hold `urls`: a power of two, each bucket about BUCKET_LOAD URLs. */
export function revisitBuckets(urls: number): number {
  let buckets = 64;
  while (buckets * BUCKET_LOAD < urls) buckets *= 2;
  return buckets;
}

const toDs = (ms: number): number => Math.max(0, Math.ceil((ms - REVISIT_EPOCH_MS) / 100));
const fromDs = (ds: number): number => REVISIT_EPOCH_MS + ds * 100;

/**
 * f16 (see `revisit.lua`): deciseconds as 5 bits of exponent and 11 of
 * mantissa. `up` rounds up (an interval is never shortened by its encoding).
 */
export function encodeF16(ms: number, up = false): number {
  let ds = Math.max(0, ms / 100);
  let exponent = 0;
  while (ds >= 2048 && exponent < 31) {
    ds /= 2;
    exponent += 1;
  }
  const mantissa = Math.min(2047, up ? Math.ceil(ds) : Math.round(ds));
  return exponent * 2048 + mantissa;
}

export function decodeF16(code: number): number {
  return (code % 2048) * 2 ** Math.floor(code / 2048) * 100;
}

/** Body size as a u8 code: 8 steps per doubling (within 4.5%). */
const encodeSize = (bytes: number): number => (bytes < 1 ? 0 : Math.min(255, Math.max(1, Math.round(8 * Math.log2(bytes)))));
const decodeSize = (code: number): number => (code === 0 ? 0 : Math.round(2 ** (code / 8)));

/** The packed state a record stores (generation 0: the script sets it). */
function packState(record: RevisitRecord): Buffer {
  const etag = record.etag !== undefined && Buffer.byteLength(record.etag) <= MAX_STORED_ETAG ? record.etag : undefined;
  const lastModifiedS = record.lastModified === undefined ? 0 : Math.max(0, Math.min(0xffffffff, Math.floor(record.lastModified / 1000)));
  const kind = etag !== undefined ? VALIDATOR_ETAG : lastModifiedS > 0 ? VALIDATOR_LAST_MODIFIED : VALIDATOR_NONE;
  const validator = kind === VALIDATOR_ETAG ? Buffer.from(etag ?? '') : kind === VALIDATOR_LAST_MODIFIED ? Buffer.alloc(4) : Buffer.alloc(0);
  if (kind === VALIDATOR_LAST_MODIFIED) validator.writeUInt32BE(lastModifiedS);
  // The link-set hash only where the value stays within Redis' compact-hash limit: the ETag saves a body at every revisit, the hash is a hint.
  const links = record.links !== undefined && FIXED_BYTES + validator.length + LINKS_BYTES <= MAX_STATE_BYTES ? record.links & 0xff : undefined;
  const tail = links === undefined ? validator : Buffer.concat([validator, Buffer.from([links])]);
  const fixed = Buffer.alloc(FIXED_BYTES);
  const estimate = record.estimate ?? { changes: 0, unchangedMs: 0, changedMs: 0 };
  let at = fixed.writeUInt32BE(Math.min(0xffffffff, toDs(record.now)), 0);
  at = fixed.writeUInt16BE(encodeF16(Math.max(100, record.intervalMs), true), at);
  at = fixed.writeUInt16BE(0, at); // the last change's age at this fetch: 0 when changed, else the script keeps the old one grown
  at += Buffer.from(/^[0-9a-f]{16}$/.test(record.signature) ? record.signature : '0000000000000000', 'hex').copy(fixed, at);
  at = fixed.writeUInt16BE(0, at);
  at = fixed.writeUInt8(Math.min(255, Math.max(0, record.depth)), at);
  at = fixed.writeUInt8(Math.min(3, Math.max(0, record.misses)) + kind * 4 + (links === undefined ? 0 : LINKS_FLAG) + (record.hub === true ? HUB_FLAG : 0), at);
  at = fixed.writeUInt8(encodeSize(record.bodyBytes), at);
  at = fixed.writeUInt8(Math.min(255, Math.round(Math.max(0, estimate.changes) * 16)), at);
  at = fixed.writeUInt16BE(encodeF16(estimate.unchangedMs), at);
  fixed.writeUInt16BE(encodeF16(estimate.changedMs), at);
  return Buffer.concat([fixed, tail]);
}

/**
 * One shard's revisit schedule (see `revisit.lua`): compact per-URL state
 * beside the seen-set, and a timing wheel that says which URLs are due.
 * Every operation is one Lua script.
 */
export class RevisitStore {
  readonly #redis: RedisClient;
  readonly #keys: RevisitKeys;
  readonly #buckets: number;

  constructor(options: { readonly redis: RedisClient; readonly namespace: string; readonly buckets: number }) {
    this.#redis = options.redis;
    this.#keys = revisitKeys(options.namespace);
    this.#buckets = options.buckets;
  }

  /** The state of a URL (normalised), or undefined when it is not known (never fetched, or retired). */
  async read(url: string): Promise<RevisitState | undefined> {
    return (await this.lookup(url)).state;
  }

  /** The state of a URL (normalised), or the hint a URL not known yet has (one script call). */
  async lookup(url: string): Promise<RevisitLookup> {
    const reply = await this.#run('read', () => revisitReadScript.run(this.#redis, [], [this.#keys.prefix, this.#buckets, url]));
    if (!Array.isArray(reply) || reply.length === 0) return { state: undefined, priorMs: undefined };
    if (reply.length === 1) {
      const hint = Buffer.from(String(reply[0]), 'hex');
      return { state: undefined, priorMs: hint.length === 2 ? decodeF16(hint.readUInt16BE(0)) : undefined };
    }
    const [fetched, interval, age, signature, , depth, flags, size, changes, unchanged, changed, tail, archived] = reply.map((value) => (typeof value === 'number' ? value : String(value)));
    const fetchedAt = fromDs(Number(fetched));
    const intervalMs = decodeF16(Number(interval));
    const kind = Math.floor(Number(flags) / 4) % 4;
    const rest = Buffer.from(String(tail ?? ''), 'hex');
    const hasLinks = (Number(flags) & LINKS_FLAG) !== 0 && rest.length >= LINKS_BYTES;
    const validator = hasLinks ? rest.subarray(0, rest.length - LINKS_BYTES) : rest;
    const leased = (Number(flags) & LEASED_FLAG) !== 0;
    const state: RevisitState = {
      dueAt: leased ? undefined : fetchedAt + intervalMs,
      intervalMs,
      fetchedAt,
      changedAt: fetchedAt - decodeF16(Number(age)),
      signature: String(signature),
      lastModified: kind === VALIDATOR_LAST_MODIFIED && validator.length === 4 ? validator.readUInt32BE(0) * 1000 : undefined,
      etag: kind === VALIDATOR_ETAG ? validator.toString() : undefined,
      misses: Number(flags) % 4,
      depth: Number(depth),
      bodyBytes: decodeSize(Number(size)),
      leased,
      estimate: { changes: Number(changes) / 16, unchangedMs: decodeF16(Number(unchanged)), changedMs: decodeF16(Number(changed)) },
      archived: archived === undefined || archived === '' ? undefined : Buffer.from(String(archived), 'hex'),
      links: hasLinks ? rest.readUInt8(rest.length - LINKS_BYTES) : undefined,
      hub: (Number(flags) & HUB_FLAG) !== 0,
    };
    return { state, priorMs: undefined };
  }

  /**
   * Applies a sitemap's hints (one script call; see revisitHintScript): a
   * known URL whose last change is newer than its last fetch is due now (or
   * once its minimum interval has passed), and a URL not fetched yet keeps
   * its prior interval for its first fetch. Returns how many URLs were made due.
   */
  async hint(hints: readonly RevisitHint[], now: number): Promise<number> {
    if (hints.length === 0) return 0;
    const args: (string | number)[] = [this.#keys.prefix, this.#buckets, toDs(now)];
    for (const hint of hints) {
      // Floored, unlike a fetch's time (rounded up): a change in the same tenth of a second as a fetch is not newer than it.
      const changed = hint.lastModified === undefined ? '' : Math.max(0, Math.floor((Math.min(hint.lastModified, now) - REVISIT_EPOCH_MS) / 100));
      const prior = hint.priorMs === undefined ? '' : encodeF16(Math.max(100, hint.priorMs));
      args.push(hint.url, changed, Math.ceil(Math.max(0, hint.minIntervalMs) / 100), prior);
    }
    return Number(await this.#run('hint', () => revisitHintScript.run(this.#redis, [], args)));
  }

  /** Stores a fetch's outcome and schedules the URL's next fetch (at now + intervalMs), atomically. */
  async record(record: RevisitRecord): Promise<void> {
    await this.#run('record', () =>
      revisitRecordScript.run(this.#redis, [this.#keys.counters], [
        this.#keys.prefix,
        this.#buckets,
        record.url,
        toDs(record.now),
        packState(record),
        record.changed ? '1' : '0',
        record.retire ? '1' : '0',
        record.outcome,
        Math.max(0, Math.round(record.bytesSaved)),
        record.archived === undefined ? '' : Buffer.from(record.archived),
        record.group ?? '',
      ]),
    );
  }

  /**
   * Takes up to `max` due URLs off the schedule, each leased for `leaseMs`
   * (due again then unless a fetch records it first). Also says how long
   * until the next wheel slot (undefined: the wheel is empty).
   */
  async pop(options: { readonly now: number; readonly max: number; readonly leaseMs: number }): Promise<{ urls: { url: string; depth: number }[]; nextInMs: number | undefined }> {
    const reply = await this.#run('pop', () =>
      revisitPopScript.run(this.#redis, [this.#keys.slots, this.#keys.counters], [this.#keys.prefix, this.#buckets, toDs(options.now), options.max, Math.ceil(options.leaseMs / 100)]),
    );
    if (!Array.isArray(reply) || reply.length === 0) throw new FrontierError(`revisit pop: unexpected reply ${JSON.stringify(reply)}`, { retryable: false });
    const urls: { url: string; depth: number }[] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) urls.push({ url: String(reply[i]), depth: Number(reply[i + 1]) });
    const next = Number(reply[reply.length - 1]);
    return { urls, nextInMs: next < 0 ? undefined : next * 100 };
  }

  /** Appends URLs (already seen) to their groups' backlogs of this shard. */
  async pushToBacklog(backlogPrefix: string, backlogCount: string, entries: readonly { group: string; depth: number; id: string; url: string }[]): Promise<void> {
    if (entries.length === 0) return;
    const args: (string | number)[] = [backlogPrefix];
    for (const entry of entries) args.push(entry.group, entry.depth, entry.id, entry.url);
    await this.#run('push', () => revisitPushScript.run(this.#redis, [backlogCount], args));
  }

  async counters(): Promise<RevisitCounters> {
    const values = await this.#redis.hmget(this.#keys.counters, ...STORED_COUNTERS);
    const counters: Record<(typeof COUNTER_FIELDS)[number], number> = emptyRevisitCounters();
    STORED_COUNTERS.forEach((field, i) => {
      counters[field] = Number(values[i] ?? 0);
    });
    counters.fetched = counters.first + counters.changed + counters.unchanged + counters.notModified + counters.gone;
    return counters;
  }

  /**
   * Wheel entries due by `now` and by `now + horizonMs` (about the URLs due:
   * an entry a later fetch made stale is counted until it is popped, and a
   * leased URL's lease entry counts as due when the lease ends).
   */
  async dueCounts(now: number, horizonMs: number): Promise<{ dueNow: number; dueSoon: number }> {
    const reply = await this.#run('due', () => revisitDueScript.run(this.#redis, [this.#keys.slots], [this.#keys.prefix, toDs(now), toDs(now + horizonMs)]));
    const [dueNow, dueSoon] = Array.isArray(reply) ? reply.map(Number) : [];
    return { dueNow: dueNow ?? 0, dueSoon: dueSoon ?? 0 };
  }

  /** The schedule's invariant, checked (see revisitAuditScript): for tests and small crawls. */
  async audit(): Promise<{ live: number; stale: number; missing: number; duplicated: number }> {
    const reply = await this.#run('audit', () => revisitAuditScript.run(this.#redis, [this.#keys.slots], [this.#keys.prefix, this.#buckets]));
    const [live, stale, missing, duplicated] = Array.isArray(reply) ? reply.map(Number) : [];
    return { live: live ?? 0, stale: stale ?? 0, missing: missing ?? 0, duplicated: duplicated ?? 0 };
  }

  async #run<T>(what: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof FrontierError) throw error;
      throw new FrontierError(`revisit ${what} failed in Redis`, { retryable: true, cause: error });
    }
  }
}

/** A continuous crawl's schedule and revisit counters, fleet-wide (`crawlq status`, the dashboard, `/metrics`). */
export interface RevisitProgress extends RevisitCounters {
  /** Wheel entries due now (about the URLs due: see RevisitStore.dueCounts). */
  readonly dueNow: number;
  /** Wheel entries due within the next hour, those due now included. */
  readonly dueNextHour: number;
}

/** Reads the revisit counters and due counts of every shard of a crawl (`shards`: its shard keyspaces, see `readShardNamespaces`). */
export async function readRevisitProgress(redis: RedisClient, shards: readonly string[], now = Date.now()): Promise<RevisitProgress> {
  const all = await Promise.all(
    shards.map(async (namespace) => {
      const store = new RevisitStore({ redis, namespace, buckets: 64 });
      const [counters, due] = await Promise.all([store.counters(), store.dueCounts(now, 3_600_000)]);
      return { ...counters, dueNow: due.dueNow, dueNextHour: due.dueSoon };
    }),
  );
  return all.reduce((a, b) => ({ ...addRevisitCounters(a, b), dueNow: a.dueNow + b.dueNow, dueNextHour: a.dueNextHour + b.dueNextHour }), { ...emptyRevisitCounters(), dueNow: 0, dueNextHour: 0 });
}
