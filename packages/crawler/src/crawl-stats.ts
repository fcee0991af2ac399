import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import type { PageRecord } from './page-record.js';

/** Fleet-wide page counters, for progress lines and summaries. */
export interface CrawlStats {
  readonly pages: number;
  readonly bytes: number;
  /** Count per status class: '2xx', '3xx', '4xx', '5xx'. */
  readonly byStatus: Readonly<Record<string, number>>;
  /** URLs not fetched on purpose, by reason (robots). */
  readonly skipped: Readonly<Record<string, number>>;
}

function statsKey(namespace: string): string {
  return `${stateKeyPrefix(namespace)}:stats`;
}

/**
 * Page counters of one worker process, added up in memory and written to
 * Redis in one round trip every `flushMs`, not one per page: they feed
 * progress lines, not correctness. Once a second: a fleet of N workers
 * costs Redis N round trips a second whatever the pages, which at a polite
 * crawl's few pages a second is more than the pages cost. `close()` writes
 * what is left.
 */
export class CrawlStatsRecorder {
  readonly #redis: RedisClient;
  readonly #key: string;
  readonly #pending = new Map<string, number>();
  readonly #timer: NodeJS.Timeout;
  readonly #onError: (error: unknown) => void;

  constructor(options: { redis: RedisClient; namespace: string; flushMs?: number; onError: (error: unknown) => void }) {
    this.#redis = options.redis;
    this.#key = statsKey(options.namespace);
    this.#onError = options.onError;
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 1_000);
    this.#timer.unref();
  }

  page(record: PageRecord): void {
    this.#add('pages', 1);
    this.#add('bytes', record.bytes);
    this.#add(`status:${Math.floor(record.status / 100)}xx`, 1);
  }

  /** A URL not fetched on purpose (robots.txt). */
  skipped(reason: string): void {
    this.#add(`skipped:${reason}`, 1);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#redis.multi();
    for (const [field, amount] of this.#pending) batch.hincrby(this.#key, field, amount);
    this.#pending.clear();
    await batch.exec().catch(this.#onError);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  #add(field: string, amount: number): void {
    this.#pending.set(field, (this.#pending.get(field) ?? 0) + amount);
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
