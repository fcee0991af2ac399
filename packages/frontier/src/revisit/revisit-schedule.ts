import { shardOfGroup } from '@crawlq/redis';
import type { RedisClient } from '@crawlq/redis';
import { urlFingerprint } from '@crawlq/urls';
import { frontierKeys } from '../keys.js';
import { addRevisitCounters, emptyRevisitCounters, revisitBuckets, RevisitStore, type RevisitCounters, type RevisitHint, type RevisitRecord, type RevisitState } from './revisit-store.js';

/** URLs one release of due revisits takes from one shard at most. */
const POP_MAX = 500;

/** A known URL as a fetch sees it: its state, and how to record the fetch in its shard. */
export interface KnownUrl {
  readonly state: RevisitState | undefined;
  /** The prior interval a URL not known yet was hinted (a sitemap's `<changefreq>`), ms; undefined: none. */
  readonly priorMs: number | undefined;
  /** Stores this fetch's outcome (see RevisitStore.record). */
  readonly record: (record: Omit<RevisitRecord, 'url' | 'group'>) => Promise<void>;
}

/**
 * The crawl's revisit schedule across its shards: each group's URLs are
 * scheduled in its shard, next to its seen-set slice and backlog, so due URLs
 * re-enter the same two-stage frontier (gate, robots.txt, shards unchanged).
 */
export class RevisitSchedule {
  readonly #shards: readonly { readonly store: RevisitStore; readonly namespace: string }[];
  readonly #groupOf: (url: string) => string;

  constructor(options: { readonly redis: RedisClient; readonly namespaces: readonly string[]; readonly expectedUrls: number; readonly groupOf: (url: string) => string }) {
    const buckets = revisitBuckets(Math.ceil(options.expectedUrls / options.namespaces.length));
    this.#shards = options.namespaces.map((namespace) => ({ namespace, store: new RevisitStore({ redis: options.redis, namespace, buckets }) }));
    this.#groupOf = options.groupOf;
  }

  #storeOf(url: string): RevisitStore {
    const shard = this.#shards[shardOfGroup(this.#groupOf(url), this.#shards.length)];
    if (shard === undefined) throw new RangeError('no shard for the URL');
    return shard.store;
  }

  /** A normalised URL's state for a fetch (one script call), and how to record the fetch. */
  async known(url: string): Promise<KnownUrl> {
    const group = this.#groupOf(url);
    const store = this.#storeOf(url);
    const { state, priorMs } = await store.lookup(url);
    return { state, priorMs, record: (record) => store.record({ ...record, url, group }) };
  }

  /** Applies a sitemap's hints to normalised URLs, each in its shard (see RevisitStore.hint); returns how many were made due. */
  async hint(hints: readonly RevisitHint[], now = Date.now()): Promise<number> {
    const byStore = new Map<RevisitStore, RevisitHint[]>();
    for (const hint of hints) {
      const store = this.#storeOf(hint.url);
      const list = byStore.get(store);
      if (list) list.push(hint);
      else byStore.set(store, [hint]);
    }
    const due = await Promise.all([...byStore].map(([store, list]) => store.hint(list, now)));
    return due.reduce((sum, count) => sum + count, 0);
  }

  /**
   * Moves due URLs into their groups' backlogs, each shard's into its own:
   * popped with a lease (a process that dies here loses nothing), then
   * pushed. Returns how many moved and the time until the next may be due.
   */
  async release(options: { readonly now: number; readonly leaseMs: number; readonly max?: number }): Promise<{ released: number; nextInMs: number | undefined }> {
    let released = 0;
    let nextInMs: number | undefined;
    for (const { store, namespace } of this.#shards) {
      const { urls, nextInMs: next } = await store.pop({ now: options.now, max: options.max ?? POP_MAX, leaseMs: options.leaseMs });
      const keys = frontierKeys(namespace);
      await store.pushToBacklog(keys.backlog, keys.backlogCount, urls.map(({ url, depth }) => ({ group: this.#groupOf(url), depth, id: urlFingerprint(url), url })));
      released += urls.length;
      if (next !== undefined) nextInMs = nextInMs === undefined ? next : Math.min(nextInMs, next);
    }
    return { released, nextInMs };
  }

  async counters(): Promise<RevisitCounters> {
    const all = await Promise.all(this.#shards.map(({ store }) => store.counters()));
    return all.reduce(addRevisitCounters, emptyRevisitCounters());
  }

  /** About the URLs due now and within `horizonMs` (see RevisitStore.dueCounts). */
  async dueCounts(now: number, horizonMs: number): Promise<{ dueNow: number; dueSoon: number }> {
    const all = await Promise.all(this.#shards.map(({ store }) => store.dueCounts(now, horizonMs)));
    return all.reduce((a, b) => ({ dueNow: a.dueNow + b.dueNow, dueSoon: a.dueSoon + b.dueSoon }), { dueNow: 0, dueSoon: 0 });
  }

  /** Every shard's schedule invariant, summed (see RevisitStore.audit). */
  async audit(): Promise<{ live: number; stale: number; missing: number; duplicated: number }> {
    const all = await Promise.all(this.#shards.map(({ store }) => store.audit()));
    return all.reduce((a, b) => ({ live: a.live + b.live, stale: a.stale + b.stale, missing: a.missing + b.missing, duplicated: a.duplicated + b.duplicated }));
  }
}
