import { stateKeyPrefix } from '@crawlq/queue';
import type { Redis } from 'ioredis';
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

/** Counts one page; fire-and-forget so a slow Redis never slows the crawl. */
export function countPage(redis: Redis, namespace: string, record: PageRecord): Promise<unknown> {
  return redis
    .multi()
    .hincrby(statsKey(namespace), 'pages', 1)
    .hincrby(statsKey(namespace), 'bytes', record.bytes)
    .hincrby(statsKey(namespace), `status:${Math.floor(record.status / 100)}xx`, 1)
    .exec();
}

/** Counts one URL skipped on purpose (robots.txt). */
export function countSkipped(redis: Redis, namespace: string, reason: string): Promise<unknown> {
  return redis.hincrby(statsKey(namespace), `skipped:${reason}`, 1);
}

export async function readCrawlStats(redis: Redis, namespace: string): Promise<CrawlStats> {
  const raw = await redis.hgetall(statsKey(namespace));
  const byStatus: Record<string, number> = {};
  const skipped: Record<string, number> = {};
  for (const [field, value] of Object.entries(raw)) {
    if (field.startsWith('status:')) byStatus[field.slice('status:'.length)] = Number(value);
    if (field.startsWith('skipped:')) skipped[field.slice('skipped:'.length)] = Number(value);
  }
  return { pages: Number(raw.pages ?? 0), bytes: Number(raw.bytes ?? 0), byStatus, skipped };
}
