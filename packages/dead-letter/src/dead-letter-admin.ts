import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { extname } from 'node:path';
import { finished } from 'node:stream/promises';
import type { ConnectionOptions } from 'bullmq';
import { CRAWL_JOB_NAME, crawlJobOptions, type CrawlJobPolicy } from '@crawlq/queue';
import type { CrawlQueueLike, CrawlQueueOfGroup } from './crawl-job.js';
import type { DeadLetterEntry, DeadLetterFilter, DeadLetterStats, PurgeSelector, RetrySelector } from './dead-letter-entry.js';
import { BATCH, DeadLetterStore, PAGE } from './dead-letter-store.js';
import { DeadLetterInputError } from './errors.js';
import { csvHeader, toCsvRow, toJsonLine, type ExportFormat } from './export-format.js';

export interface CreateDeadLetterAdminOptions {
  /** BullMQ connection (options with `url`, or an ioredis instance). */
  readonly connection: ConnectionOptions;
  readonly namespace: string;
}

/**
 * The operator side of a namespace's dead-letter queue: reviewing entries
 * (the CLI's `dlq` commands, the dashboard). Recording them is
 * `DeadLetterRecorder`'s.
 */
export interface DeadLetterAdmin {
  /** Entries, newest first. `limit` defaults to 100. */
  list(filter?: DeadLetterFilter): Promise<DeadLetterEntry[]>;
  show(id: string): Promise<DeadLetterEntry | null>;
  /**
   * Puts entries back into the crawl queue (same job id, fresh attempt budget
   * from `policy`, `blockedSince`, `due` and `lag` cleared) and removes them from the DLQ.
   * Idempotent: retrying an id twice adds one job.
   */
  retry(selector: RetrySelector, crawlQueue: CrawlQueueLike | CrawlQueueOfGroup, policy: CrawlJobPolicy): Promise<{ retried: number }>;
  purge(selector: PurgeSelector): Promise<{ purged: number }>;
  /**
   * Streams every entry to `file` (written to a temporary name, then renamed):
   * JSON lines, or CSV with a header (RFC 4180 quoting). The format defaults
   * by extension: `.csv` is CSV, anything else JSON lines.
   */
  export(file: string, options?: { format?: ExportFormat }): Promise<{ written: number }>;
  stats(): Promise<DeadLetterStats>;
  count(): Promise<number>;
  close(): Promise<void>;
  /**
   * Drops the connections at once: for a Redis that is gone, where `close()`
   * would wait for it to come back. Calls still waiting never settle.
   */
  disconnect(): Promise<void>;
}

export function createDeadLetterAdmin(options: CreateDeadLetterAdminOptions): DeadLetterAdmin {
  return new RedisDeadLetterAdmin(options);
}

class RedisDeadLetterAdmin implements DeadLetterAdmin {
  readonly #store: DeadLetterStore;

  constructor(options: CreateDeadLetterAdminOptions) {
    this.#store = new DeadLetterStore(options.connection, options.namespace);
  }

  async list(filter: DeadLetterFilter = {}): Promise<DeadLetterEntry[]> {
    const limit = Math.max(0, filter.limit ?? 100);
    let skip = Math.max(0, filter.offset ?? 0);
    const found: DeadLetterEntry[] = [];
    if (limit === 0) return found;
    for await (const page of this.#store.pages(filter.since)) {
      for (const entry of page) {
        if (filter.group !== undefined && entry.group !== filter.group) continue;
        if (filter.reason !== undefined && entry.reason !== filter.reason) continue;
        if (skip > 0) {
          skip -= 1;
          continue;
        }
        found.push(entry);
        if (found.length >= limit) return found;
      }
    }
    return found;
  }

  async show(id: string): Promise<DeadLetterEntry | null> {
    return (await this.#store.load([id]))[0] ?? null;
  }

  async retry(selector: RetrySelector, crawlQueue: CrawlQueueLike | CrawlQueueOfGroup, policy: CrawlJobPolicy): Promise<{ retried: number }> {
    const ids = 'ids' in selector ? [...new Set(selector.ids)] : await this.#store.ids('group' in selector ? selector.group : undefined);
    let retried = 0;
    for (let index = 0; index < ids.length; index += BATCH) {
      const results = await Promise.all(ids.slice(index, index + BATCH).map((id) => this.#retryOne(id, crawlQueue, policy)));
      retried += results.filter(Boolean).length;
    }
    return { retried };
  }

  async purge(selector: PurgeSelector): Promise<{ purged: number }> {
    if ('ids' in selector) return { purged: await this.#store.remove([...new Set(selector.ids)]) };
    if ('olderThanMs' in selector) return { purged: await this.#store.removeOlderThan(Date.now() - selector.olderThanMs) };
    let purged = 0;
    // Index first, then any entry job the index lost track of (a crash between the two writes).
    for (;;) {
      const ids = await this.#store.redis.zrange(this.#store.keys.index, 0, PAGE - 1);
      if (ids.length === 0) break;
      purged += await this.#store.remove(ids);
    }
    for (;;) {
      const ids = await this.#store.queue.getRanges(['wait', 'delayed', 'prioritized'], 0, PAGE - 1);
      if (ids.length === 0) break;
      await Promise.all(ids.map((id) => this.#store.queue.remove(id)));
      purged += ids.length;
    }
    return { purged };
  }

  async export(file: string, options: { format?: ExportFormat } = {}): Promise<{ written: number }> {
    const format = options.format ?? (extname(file).toLowerCase() === '.csv' ? 'csv' : 'jsonl');
    if (format !== 'csv' && format !== 'jsonl') throw new DeadLetterInputError(`unknown export format "${String(format)}" (use jsonl or csv)`);
    const partial = `${file}.partial-${process.pid}`;
    const out = createWriteStream(partial, { mode: 0o600 });
    let written = 0;
    try {
      const write = async (chunk: string) => {
        if (!out.write(chunk)) await once(out, 'drain');
      };
      if (format === 'csv') await write(csvHeader());
      for await (const page of this.#store.pages(undefined)) {
        for (const entry of page) {
          await write(format === 'csv' ? toCsvRow(entry) : toJsonLine(entry));
          written += 1;
        }
      }
      out.end();
      await finished(out);
      await rename(partial, file);
    } catch (error) {
      out.destroy();
      await rm(partial, { force: true });
      throw error;
    }
    return { written };
  }

  async stats(): Promise<DeadLetterStats> {
    const byGroup: Record<string, number> = {};
    const byReason: Record<string, number> = {};
    let total = 0;
    for await (const page of this.#store.pages(undefined)) {
      for (const entry of page) {
        total += 1;
        byGroup[entry.group] = (byGroup[entry.group] ?? 0) + 1;
        byReason[entry.reason] = (byReason[entry.reason] ?? 0) + 1;
      }
    }
    return { total, byGroup, byReason };
  }

  count(): Promise<number> {
    return this.#store.redis.zcard(this.#store.keys.index);
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  disconnect(): Promise<void> {
    return this.#store.disconnect();
  }

  async #retryOne(id: string, queueOrRouter: CrawlQueueLike | CrawlQueueOfGroup, policy: CrawlJobPolicy): Promise<boolean> {
    const entry = await this.show(id);
    if (!entry) {
      await this.#store.redis.zrem(this.#store.keys.index, id); // A dangling index member, if any.
      return false;
    }
    const crawlQueue = typeof queueOrRouter === 'function' ? queueOrRouter(entry.job.group) : queueOrRouter;
    const existing = await crawlQueue.getJob(id);
    const state = existing ? await existing.getState() : 'unknown';
    // A finished job with this id would turn the add into a no-op.
    if (existing && (state === 'failed' || state === 'completed')) await existing.remove();
    if (!existing || state === 'failed' || state === 'completed' || state === 'unknown') {
      // A new start: neither its old wait nor its old start slot applies.
      const { blockedSince: _blockedSince, due: _due, lag: _lag, ...data } = entry.job;
      await crawlQueue.add(CRAWL_JOB_NAME, data, { ...crawlJobOptions(policy), jobId: id });
    }
    // Counted by the index removal: two concurrent retries of one id count once.
    return this.#store.removeOne(id);
  }
}
