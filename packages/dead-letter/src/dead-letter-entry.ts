import type { CrawlJobData } from '@crawlq/queue';

/**
 * One dead-lettered crawl job: the data of a job in the paused `dead-letter`
 * BullMQ queue, whose job id is the crawl job's id.
 */
export interface DeadLetterEntry {
  /** The crawl job id (the URL fingerprint); also this entry's job id. */
  readonly id: string;
  /** The URL, userinfo and secret query values removed (for display; `job.url` is the original). */
  readonly url: string;
  readonly group: string;
  readonly depth: number;
  /** The crawl job's data as it was, for `retry()`. */
  readonly job: CrawlJobData;
  readonly jobOptions: { readonly attempts: number };
  /** Short machine-friendly reason (`http-503`, `timeout`, `robots`, ...). See `classifyFailure`. */
  readonly reason: string;
  readonly errorClass: string;
  /** The last error's message, credentials removed. */
  readonly message: string;
  /** Only when the user's crawler code (--crawler) threw: its stack, credentials removed. */
  readonly stack?: string;
  /** HTTP status of the last response, or null when there was none. */
  readonly status: number | null;
  /** Attempts the crawl job made. */
  readonly attempts: number;
  /** ISO time of the first failed attempt (equal to `lastFailedAt` when unknown). */
  readonly firstFailedAt: string;
  /** ISO time of the final failure. */
  readonly lastFailedAt: string;
  /** The worker that recorded the entry. */
  readonly workerId: string;
}

/** Selects entries for `list()`; all given conditions must hold. */
export interface DeadLetterFilter {
  readonly group?: string;
  readonly reason?: string;
  /** Only entries whose final failure is at or after this time. */
  readonly since?: Date;
  /** @default 100 */
  readonly limit?: number;
  /** Matching entries to skip (newest first). @default 0 */
  readonly offset?: number;
}

/** Which entries `retry()` puts back. */
export type RetrySelector = { readonly ids: readonly string[] } | { readonly all: true } | { readonly group: string };

/** Which entries `purge()` deletes. */
export type PurgeSelector = { readonly all: true } | { readonly olderThanMs: number } | { readonly ids: readonly string[] };

/** Retention applied by `trim()`. */
export interface DeadLetterRetention {
  /** Entries whose final failure is older than this are deleted. */
  readonly maxAgeMs?: number;
  /** Only the newest this many entries are kept. */
  readonly maxCount?: number;
}

/** Counts for `crawlq dlq stats` and the dashboard. */
export interface DeadLetterStats {
  readonly total: number;
  readonly byGroup: Record<string, number>;
  readonly byReason: Record<string, number>;
}

/** Receives each new entry; `createAlerts()` of @crawlq/alerts returns one. */
export interface AlertScheduler {
  notify(entry: DeadLetterEntry): Promise<void>;
}

/** True when `value` has the shape of an entry this package wrote. */
export function isDeadLetterEntry(value: unknown): value is DeadLetterEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    typeof entry.id === 'string' &&
    typeof entry.url === 'string' &&
    typeof entry.group === 'string' &&
    typeof entry.reason === 'string' &&
    typeof entry.lastFailedAt === 'string' &&
    typeof entry.job === 'object' &&
    entry.job !== null
  );
}
