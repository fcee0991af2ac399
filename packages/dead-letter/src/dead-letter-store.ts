import type { ConnectionOptions, Queue } from 'bullmq';
import { QUEUE_NAMES, openQueue } from '@crawlq/queue';
import { openRedisFrom, type RedisClient } from '@crawlq/redis';
import { isDeadLetterEntry, type DeadLetterEntry } from './dead-letter-entry.js';
import { deadLetterKeys, type DeadLetterKeys } from './keys.js';

/** BullMQ job name of every entry in the `dead-letter` queue. */
export const DEAD_LETTER_JOB_NAME = 'dead-letter';

/** Ids per Redis round trip when paging through entries. */
export const PAGE = 200;
/** Entries removed or retried concurrently. */
export const BATCH = 20;

/**
 * The storage under both the recorder (worker side) and the admin (operator
 * side) of a namespace's dead-letter queue.
 *
 * Entries are jobs in the `dead-letter` BullMQ queue (job id = crawl job id),
 * which is paused and has no worker, so they sit in `waiting` and are never
 * processed nor expire; dashboards such as bull-board show them as they are.
 * A sorted set beside it (id -> lastFailedAt) orders them for listing,
 * paging and retention.
 */
export class DeadLetterStore {
  readonly keys: DeadLetterKeys;
  readonly redis: RedisClient;
  readonly queue: Queue<DeadLetterEntry, void, typeof DEAD_LETTER_JOB_NAME>;
  #paused: Promise<void> | undefined;

  constructor(connection: ConnectionOptions, namespace: string) {
    this.keys = deadLetterKeys(namespace);
    this.redis = openRedisFrom(connection);
    this.queue = openQueue<DeadLetterEntry, void, typeof DEAD_LETTER_JOB_NAME>(QUEUE_NAMES.deadLetter, { connection, namespace });
  }

  /** Pauses the DLQ once per instance: even a stray worker must never process an entry. */
  ensurePaused(): Promise<void> {
    this.#paused ??= (async () => {
      if (!(await this.queue.isPaused())) await this.queue.pause();
    })().catch((error: unknown) => {
      this.#paused = undefined;
      throw error;
    });
    return this.#paused;
  }

  async remove(ids: readonly string[]): Promise<number> {
    let removed = 0;
    for (let index = 0; index < ids.length; index += BATCH) {
      const results = await Promise.all(ids.slice(index, index + BATCH).map((id) => this.removeOne(id)));
      removed += results.filter(Boolean).length;
    }
    return removed;
  }

  async removeOne(id: string): Promise<boolean> {
    // The job first: a crash in between leaves a dangling index member, which
    // list() skips, rather than an entry job nothing points to.
    await this.queue.remove(id);
    const [zremmed] = await Promise.all([this.redis.zrem(this.keys.index, id), this.redis.del(this.keys.firstFailed(id))]);
    return zremmed === 1;
  }

  async removeOlderThan(cutoffMs: number): Promise<number> {
    let purged = 0;
    for (;;) {
      const ids = await this.redis.zrangebyscore(this.keys.index, '-inf', `(${cutoffMs}`, 'LIMIT', 0, PAGE);
      if (ids.length === 0) break;
      purged += await this.remove(ids);
    }
    return purged;
  }

  /** Ids of all entries, or of one group's, newest first. */
  async ids(group: string | undefined): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of this.pages(undefined)) {
      for (const entry of page) if (group === undefined || entry.group === group) ids.push(entry.id);
    }
    return ids;
  }

  /**
   * Entries newest first, a page at a time, since `since`. Pages by score (not
   * offset), so entries recorded meanwhile do not shift the pages.
   */
  async *pages(since: Date | undefined): AsyncGenerator<DeadLetterEntry[]> {
    const min = since === undefined ? '-inf' : String(since.getTime());
    let max = '+inf';
    let seenAtMax = new Set<string>();
    for (;;) {
      const requested = PAGE + seenAtMax.size;
      const reply = await this.redis.zrevrangebyscore(this.keys.index, max, min, 'WITHSCORES', 'LIMIT', 0, requested);
      const pairs: [string, number][] = [];
      for (let index = 0; index + 1 < reply.length; index += 2) pairs.push([reply[index] ?? '', Number(reply[index + 1])]);
      const fresh = pairs.filter(([id]) => !seenAtMax.has(id));
      if (fresh.length === 0) return;
      yield await this.load(fresh.map(([id]) => id));
      if (pairs.length < requested) return;
      const lowest = fresh[fresh.length - 1]?.[1] ?? 0;
      const atLowest = fresh.filter(([, score]) => score === lowest).map(([id]) => id);
      // Members tied at the boundary score come again in the next page: skip those already seen.
      seenAtMax = String(lowest) === max ? new Set([...seenAtMax, ...atLowest]) : new Set(atLowest);
      max = String(lowest);
    }
  }

  async load(ids: readonly string[]): Promise<DeadLetterEntry[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.queue.toKey(id), 'data');
    const replies = (await pipeline.exec()) ?? [];
    const entries: DeadLetterEntry[] = [];
    for (const [error, raw] of replies) {
      if (error || typeof raw !== 'string') continue; // Removed meanwhile.
      try {
        const parsed: unknown = JSON.parse(raw);
        if (isDeadLetterEntry(parsed)) entries.push(parsed);
      } catch {
        // Not ours (someone added a job by hand): skip it.
      }
    }
    return entries;
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  async disconnect(): Promise<void> {
    this.redis.disconnect();
    // Not the queue's own disconnect(): it waits for an 'end' that a reconnecting client never emits.
    (await this.queue.backend.client).disconnect();
  }
}
