import { defineLuaScript, stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import { CONTROL_LUA } from '../lua/files.js';
import type { PageRecord } from '../page-record.js';

/** Fleet-wide page counters, for progress lines and summaries. */
export interface CrawlStats {
  readonly pages: number;
  readonly bytes: number;
  /** Count per status class: '2xx', '3xx', '4xx', '5xx'. */
  readonly byStatus: Readonly<Record<string, number>>;
  /** URLs not fetched on purpose, by reason (robots). */
  readonly skipped: Readonly<Record<string, number>>;
}

/**
 * Adds the counts in one step (no reader sees half of them, and a write
 * whose connection dropped applied all or none), as the MULTI it replaces
 * did, for one command less per write: a wide polite crawl writes its
 * counters about every other page.
 * Its KEYS, ARGV and reply: `lua/crawl-stats-add.lua`.
 */
const addCountsScript = defineLuaScript({
  name: 'crawl-stats-add',
  keys: 1,
  file: CONTROL_LUA.file('lua/crawl-stats-add.lua'),
});

function statsKey(namespace: string): string {
  return `${stateKeyPrefix(namespace)}:stats`;
}

/**
 * Page counters of one worker process, counted where the record is written:
 * a job awaits `page()` after its record is in the sink and before it moves
 * on (to its next URL, or to completion). So whatever kills a worker, the
 * records its counts miss are at most one per job it had in flight: the
 * URL in hand, whose record was written and whose count was not yet in
 * Redis. (A job's later URLs are not started; its earlier ones were counted
 * before it moved on.) The same URL is the one the job's next worker starts
 * at, so its record may be written, and counted, twice.
 *
 * Counts are written as a group commit, one script call at a time: the pages
 * finished while one is in flight go together in the next, so a busy worker
 * has at most one counters write under way, however many pages it finishes.
 */
export class CrawlStatsRecorder {
  readonly #redis: RedisClient;
  readonly #key: string;
  readonly #pending = new Map<string, number>();
  /** Resolvers of the counts in `#pending`, released when their write is answered. */
  #waiters: (() => void)[] = [];
  #flushing: Promise<void> | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #onError: (error: unknown) => void;

  constructor(options: { redis: RedisClient; namespace: string; retryMs?: number; onError: (error: unknown) => void }) {
    this.#redis = options.redis;
    this.#key = statsKey(options.namespace);
    this.#onError = options.onError;
    // Counts whose write failed are kept and tried again on this beat.
    this.#timer = setInterval(() => this.#kick(), options.retryMs ?? 1_000);
    this.#timer.unref();
  }

  /** Counts a written page; resolves once the count is in Redis (or its write failed and is kept for the next try). */
  page(record: PageRecord): Promise<void> {
    this.#add('pages', 1);
    this.#add('bytes', record.bytes);
    this.#add(`status:${Math.floor(record.status / 100)}xx`, 1);
    return this.#commit();
  }

  /** A URL not fetched on purpose (robots.txt); resolves as `page` does. */
  skipped(reason: string): Promise<void> {
    this.#add(`skipped:${reason}`, 1);
    return this.#commit();
  }

  /** Writes whatever is pending. */
  async flush(): Promise<void> {
    this.#kick();
    while (this.#flushing) await this.#flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  #add(field: string, amount: number): void {
    this.#pending.set(field, (this.#pending.get(field) ?? 0) + amount);
  }

  #commit(): Promise<void> {
    const counted = new Promise<void>((resolve) => this.#waiters.push(resolve));
    this.#kick();
    return counted;
  }

  #kick(): void {
    if (this.#flushing || this.#pending.size === 0) return;
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = undefined;
      // Counts added between the last write's answer and this callback.
      this.#kick();
    });
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0) {
      const amounts = [...this.#pending];
      const waiters = this.#waiters;
      this.#pending.clear();
      this.#waiters = [];
      try {
        await addCountsScript.run(this.#redis, [this.#key], amounts.flat());
      } catch (error) {
        // Kept for the retry beat. The pages are written: their jobs go on
        // (a job cannot complete while Redis refuses writes anyway).
        for (const [field, amount] of amounts) this.#add(field, amount);
        this.#onError(error);
        for (const resolve of waiters) resolve();
        return;
      }
      for (const resolve of waiters) resolve();
    }
  }
}

export async function readCrawlStats(redis: RedisClient, namespace: string): Promise<CrawlStats> {
  const raw = await redis.hgetall(statsKey(namespace));
  const byStatus: Record<string, number> = {};
  const skipped: Record<string, number> = {};
  for (const [field, value] of Object.entries(raw)) {
    if (field.startsWith('status:')) byStatus[field.slice('status:'.length)] = Number(value);
    if (field.startsWith('skipped:')) skipped[field.slice('skipped:'.length)] = Number(value);
  }
  return { pages: Number(raw.pages ?? 0), bytes: Number(raw.bytes ?? 0), byStatus, skipped };
}
