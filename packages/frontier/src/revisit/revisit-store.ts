import type { RedisClient } from '@crawlq/redis';
import { FrontierError } from '../frontier-errors.js';
import { revisitAuditScript, revisitPopScript, revisitPushScript, revisitReadScript, revisitRecordScript } from './revisit-lua.js';
import { revisitKeys, type RevisitKeys } from './revisit-keys.js';

/** Times in the revisit state count deciseconds from here (a u32 lasts 13 years). */
export const REVISIT_EPOCH_MS = Date.UTC(2024, 0, 1);
/** ETags longer than this are not kept (a bucket's values stay small); Last-Modified and the signature still apply. */
export const MAX_STORED_ETAG = 24;
/** URLs per bucket the bucket count is sized for: well under Redis' 128-field listpack limit. */
const BUCKET_LOAD = 64;

/** What the schedule holds for one known URL. */
export interface RevisitState {
  readonly dueAt: number;
  readonly intervalMs: number;
  readonly fetchedAt: number;
  readonly changedAt: number;
  /** 64-bit content signature, 16 hex digits. */
  readonly signature: string;
  /** The page's Last-Modified (ms), if it sent one. */
  readonly lastModified: number | undefined;
  readonly etag: string | undefined;
  /** 404/410 answers in a row. */
  readonly misses: number;
  readonly depth: number;
  /** The last full body's size (bytes, KiB precision): what a 304 saves. */
  readonly bodyBytes: number;
}

/** What to store after a fetch of a URL. */
export interface RevisitRecord {
  readonly url: string;
  /** The URL's 16-byte fingerprint (see `urlFingerprint`). */
  readonly fingerprint: Buffer;
  readonly now: number;
  readonly nextDueAt: number;
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
}

/** The fleet's revisit counters (one shard's, or summed). */
export interface RevisitCounters {
  /** URLs with a schedule (fetched at least once, not retired). */
  readonly known: number;
  readonly fetched: number;
  /** Fetches that found the page new (first fetch of the URL). */
  readonly first: number;
  readonly changed: number;
  /** 200 with the same content signature as before. */
  readonly unchanged: number;
  /** 304 Not Modified. */
  readonly notModified: number;
  readonly bytesSaved: number;
  readonly retired: number;
  /** Due URLs handed to the backlogs. */
  readonly leased: number;
}

const COUNTER_FIELDS = ['known', 'fetched', 'first', 'changed', 'unchanged', 'notModified', 'bytesSaved', 'retired', 'leased'] as const;

export function emptyRevisitCounters(): RevisitCounters {
  return { known: 0, fetched: 0, first: 0, changed: 0, unchanged: 0, notModified: 0, bytesSaved: 0, retired: 0, leased: 0 };
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
 * One shard's revisit schedule (see REVISIT_INCLUDE): compact per-URL state
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

  /** The state of a URL by its fingerprint, or undefined when it is not known (never fetched, or retired). */
  async read(fingerprint: Buffer): Promise<RevisitState | undefined> {
    const reply = await this.#run('read', () => revisitReadScript.run(this.#redis, [], [this.#keys.prefix, this.#buckets, fingerprint]));
    if (!Array.isArray(reply) || reply.length === 0) return undefined;
    const [due, interval, fetched, changed, signature, modified, etag, misses, depth, size] = reply;
    return {
      dueAt: fromDs(Number(due)),
      intervalMs: Number(interval) * 100,
      fetchedAt: fromDs(Number(fetched)),
      changedAt: fromDs(Number(changed)),
      signature: String(signature),
      lastModified: Number(modified) > 0 ? Number(modified) * 1000 : undefined,
      etag: etag === '' || etag === null ? undefined : String(etag),
      misses: Number(misses),
      depth: Number(depth),
      bodyBytes: Number(size) * 1024,
    };
  }

  /** Stores a fetch's outcome and the URL's next due time, atomically. */
  async record(record: RevisitRecord): Promise<void> {
    const etag = record.etag !== undefined && Buffer.byteLength(record.etag) <= MAX_STORED_ETAG ? record.etag : '';
    await this.#run('record', () =>
      revisitRecordScript.run(this.#redis, [this.#keys.counters], [
        this.#keys.prefix,
        this.#buckets,
        record.fingerprint,
        record.url,
        toDs(record.now),
        toDs(record.nextDueAt),
        Math.max(1, Math.round(record.intervalMs / 100)),
        record.changed ? '1' : '0',
        /^[0-9a-f]{16}$/.test(record.signature) ? record.signature : '0000000000000000',
        record.lastModified === undefined ? 0 : Math.max(0, Math.floor(record.lastModified / 1000)),
        etag,
        record.misses,
        record.depth,
        record.retire ? '1' : '0',
        record.outcome,
        Math.max(0, Math.round(record.bytesSaved)),
        Math.ceil(Math.max(0, record.bodyBytes) / 1024),
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
    const values = await this.#redis.hmget(this.#keys.counters, ...COUNTER_FIELDS);
    const counters: Record<(typeof COUNTER_FIELDS)[number], number> = emptyRevisitCounters();
    COUNTER_FIELDS.forEach((field, i) => {
      counters[field] = Number(values[i] ?? 0);
    });
    return counters;
  }

  /**
   * Wheel entries due by `now` and by `now + horizonMs` (about the URLs due:
   * an entry a later fetch made stale is counted until it is popped).
   */
  async dueCounts(now: number, horizonMs: number): Promise<{ dueNow: number; dueSoon: number }> {
    const slots = await this.#redis.zrangebyscore(this.#keys.slots, '-inf', toDs(now + horizonMs), 'WITHSCORES');
    let dueNow = 0;
    let dueSoon = 0;
    const nowDs = toDs(now);
    const pipeline = this.#redis.pipeline();
    const scores: number[] = [];
    for (let i = 0; i + 1 < slots.length; i += 2) {
      pipeline.llen(`${this.#keys.prefix}w:${slots[i] ?? ''}`);
      scores.push(Number(slots[i + 1]));
    }
    const lengths = scores.length === 0 ? [] : ((await pipeline.exec()) ?? []);
    scores.forEach((score, i) => {
      const length = Number(lengths[i]?.[1] ?? 0);
      dueSoon += length;
      if (score <= nowDs) dueNow += length;
    });
    return { dueNow, dueSoon };
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
