import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { extname } from 'node:path';
import { finished } from 'node:stream/promises';
import { Queue, type ConnectionOptions, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { CRAWL_JOB_NAME, QUEUE_NAMES, crawlJobOptions, queuePrefix, type CrawlJobData, type CrawlJobPolicy } from '@crawlq/queue';
import { classifyFailure, classifyFailureMessage, type FailureClassification } from './classify-failure.js';
import {
  isDeadLetterEntry,
  type AlertScheduler,
  type DeadLetterEntry,
  type DeadLetterFilter,
  type DeadLetterRetention,
  type DeadLetterStats,
  type PurgeSelector,
  type RetrySelector,
} from './dead-letter-entry.js';
import { DeadLetterInputError } from './errors.js';
import { csvHeader, toCsvRow, toJsonLine, type ExportFormat } from './export-format.js';
import { isFinalFailure } from './final-failure.js';
import { deadLetterKeys, type DeadLetterKeys } from './keys.js';
import { openRedis } from './open-redis.js';
import { redactUrl } from '@crawlq/urls';

/** BullMQ job name of every entry in the `dead-letter` queue. */
export const DEAD_LETTER_JOB_NAME = 'dead-letter';

/** What `record()` needs from a crawl job: a BullMQ `Job<CrawlJobData>` fits. */
export type FailedCrawlJob = Pick<Job<CrawlJobData>, 'id' | 'data' | 'opts' | 'attemptsMade' | 'finishedOn' | 'failedReason' | 'stacktrace' | 'remove'>;

/** What `reconcile()` and `retry()` need from the crawl queue: `openCrawlQueue()`'s queue fits. */
export interface CrawlQueueLike {
  getFailed(start?: number, end?: number): Promise<(FailedCrawlJob | undefined)[]>;
  getJob(jobId: string): Promise<(FailedCrawlJob & Pick<Job<CrawlJobData>, 'getState'>) | undefined>;
  add(name: typeof CRAWL_JOB_NAME, data: CrawlJobData, opts?: JobsOptions): Promise<unknown>;
}

/** Input of `record()`. */
export interface RecordInput {
  /** The crawl job, after its final failed attempt. */
  readonly job: FailedCrawlJob;
  /** What the last attempt threw. */
  readonly error: unknown;
  /** Which worker records it (host:pid). */
  readonly workerId: string;
  /** Overrides the reason `classifyFailure(error)` finds. */
  readonly reason?: string;
  /** Overrides the status `classifyFailure(error)` finds. */
  readonly status?: number | null;
  /**
   * Remove the failed job from the crawl queue once recorded, so the failed
   * set does not grow. @default true
   */
  readonly removeFromCrawlQueue?: boolean;
}

export interface CreateDeadLettersOptions {
  /** BullMQ connection (options with `url`, or an ioredis instance). */
  readonly connection: ConnectionOptions;
  readonly namespace: string;
  /** Told about each new entry (`createAlerts()`); no alerts when absent. */
  readonly alerts?: AlertScheduler;
  /** What `trim()` applies. @default keep everything */
  readonly retention?: DeadLetterRetention;
  /** How long a first-failure time noted by `noteFailedAttempt()` is kept. @default 604800000 (7 days) */
  readonly firstFailureTtlMs?: number;
}

/**
 * The dead-letter queue of a namespace: crawl jobs whose attempts are used up,
 * kept until an operator retries or purges them.
 *
 * Entries are jobs in the `dead-letter` BullMQ queue (job id = crawl job id),
 * which is paused and has no worker, so they sit in `waiting` and are never
 * processed nor expire; dashboards such as bull-board show them as they are.
 * A sorted set beside it (id -> lastFailedAt) orders them for listing,
 * paging and retention.
 */
export interface DeadLetters {
  /**
   * Records a crawl job's final failure. Idempotent: the same crawl job id
   * twice is one entry (`created` is false the second time). A new entry is
   * reported to `alerts`. Then the failed job is removed from the crawl queue
   * (unless `removeFromCrawlQueue` is false); if that fails, `reconcile()`
   * removes it later.
   */
  record(input: RecordInput): Promise<{ created: boolean }>;
  /**
   * For a crawl worker's `failed` event (every attempt): notes when a job first
   * failed, and records it when the failure is final.
   */
  handleFailed(job: FailedCrawlJob | undefined, error: unknown, workerId: string): Promise<{ final: boolean; created: boolean }>;
  /** Notes the first failed attempt of a job that will be retried, for the entry's `firstFailedAt`. */
  noteFailedAttempt(job: Pick<FailedCrawlJob, 'id'>): Promise<void>;
  /**
   * Records the jobs in the crawl queue's failed set that no worker recorded
   * (their worker died right after the final failure), reading the reason from
   * `failedReason`. Run at worker start-up and periodically. Returns how many
   * new entries it made.
   */
  reconcile(crawlQueue: CrawlQueueLike, workerId: string): Promise<number>;
  /** Entries, newest first. `limit` defaults to 100. */
  list(filter?: DeadLetterFilter): Promise<DeadLetterEntry[]>;
  show(id: string): Promise<DeadLetterEntry | null>;
  /**
   * Puts entries back into the crawl queue (same job id, fresh attempt budget
   * from `policy`, `blockedSince` cleared) and removes them from the DLQ.
   * Idempotent: retrying an id twice adds one job.
   */
  retry(selector: RetrySelector, crawlQueue: CrawlQueueLike, policy: CrawlJobPolicy): Promise<{ retried: number }>;
  purge(selector: PurgeSelector): Promise<{ purged: number }>;
  /** Applies the retention (`maxAgeMs`, `maxCount`) given here or at creation. */
  trim(retention?: DeadLetterRetention): Promise<{ purged: number }>;
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

export function createDeadLetters(options: CreateDeadLettersOptions): DeadLetters {
  return new RedisDeadLetters(options);
}

/** Ids per Redis round trip when paging through entries. */
const PAGE = 200;
/** Entries removed or retried concurrently. */
const BATCH = 20;
const DEFAULT_FIRST_FAILURE_TTL_MS = 7 * 24 * 3_600_000;

class RedisDeadLetters implements DeadLetters {
  readonly #options: CreateDeadLettersOptions;
  readonly #keys: DeadLetterKeys;
  readonly #redis: Redis;
  readonly #queue: Queue<DeadLetterEntry, void, typeof DEAD_LETTER_JOB_NAME>;
  #paused: Promise<void> | undefined;

  constructor(options: CreateDeadLettersOptions) {
    this.#options = options;
    this.#keys = deadLetterKeys(options.namespace);
    this.#redis = openRedis(options.connection);
    this.#queue = new Queue<DeadLetterEntry, void, typeof DEAD_LETTER_JOB_NAME>(QUEUE_NAMES.deadLetter, {
      connection: options.connection,
      prefix: queuePrefix(options.namespace),
    });
    this.#queue.on('error', () => undefined); // Surfaced by the rejected calls.
  }

  async record(input: RecordInput): Promise<{ created: boolean }> {
    const classified = classifyFailure(input.error);
    const { created } = await this.#record(input.job, {
      classification: {
        ...classified,
        ...(input.reason === undefined ? {} : { reason: input.reason }),
        ...(input.status === undefined ? {} : { status: input.status }),
      },
      workerId: input.workerId,
      remove: input.removeFromCrawlQueue ?? true,
    });
    return { created };
  }

  async handleFailed(job: FailedCrawlJob | undefined, error: unknown, workerId: string): Promise<{ final: boolean; created: boolean }> {
    if (job?.id === undefined) return { final: false, created: false };
    if (!isFinalFailure(job, error)) {
      await this.noteFailedAttempt(job);
      return { final: false, created: false };
    }
    const { created } = await this.record({ job, error, workerId });
    return { final: true, created };
  }

  async noteFailedAttempt(job: Pick<FailedCrawlJob, 'id'>): Promise<void> {
    if (job.id === undefined) return;
    const ttl = this.#options.firstFailureTtlMs ?? DEFAULT_FIRST_FAILURE_TTL_MS;
    await this.#redis.set(this.#keys.firstFailed(job.id), String(Date.now()), 'PX', ttl, 'NX');
  }

  async reconcile(crawlQueue: CrawlQueueLike, workerId: string): Promise<number> {
    let recorded = 0;
    let start = 0;
    // Recorded jobs leave the failed set, so the next page starts after the
    // ones that stayed (removal can fail), not after the ones we read.
    for (;;) {
      const jobs = await crawlQueue.getFailed(start, start + PAGE - 1);
      if (jobs.length === 0) break;
      let stayed = 0;
      for (const job of jobs) {
        if (job?.id === undefined) {
          stayed += 1;
          continue;
        }
        const lastStack = job.stacktrace?.at(-1) ?? null;
        const { created, removed } = await this.#record(job, {
          classification: classifyFailureMessage(job.failedReason ?? '', lastStack),
          workerId,
          remove: true,
        });
        if (created) recorded += 1;
        if (!removed) stayed += 1;
      }
      start += stayed;
    }
    return recorded;
  }

  async list(filter: DeadLetterFilter = {}): Promise<DeadLetterEntry[]> {
    const limit = Math.max(0, filter.limit ?? 100);
    let skip = Math.max(0, filter.offset ?? 0);
    const found: DeadLetterEntry[] = [];
    if (limit === 0) return found;
    for await (const page of this.#pages(filter.since)) {
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
    return (await this.#load([id]))[0] ?? null;
  }

  async retry(selector: RetrySelector, crawlQueue: CrawlQueueLike, policy: CrawlJobPolicy): Promise<{ retried: number }> {
    const ids = 'ids' in selector ? [...new Set(selector.ids)] : await this.#ids('group' in selector ? selector.group : undefined);
    let retried = 0;
    for (let index = 0; index < ids.length; index += BATCH) {
      const results = await Promise.all(ids.slice(index, index + BATCH).map((id) => this.#retryOne(id, crawlQueue, policy)));
      retried += results.filter(Boolean).length;
    }
    return { retried };
  }

  async purge(selector: PurgeSelector): Promise<{ purged: number }> {
    if ('ids' in selector) return { purged: await this.#remove([...new Set(selector.ids)]) };
    if ('olderThanMs' in selector) return { purged: await this.#removeOlderThan(Date.now() - selector.olderThanMs) };
    let purged = 0;
    // Index first, then any entry job the index lost track of (a crash between the two writes).
    for (;;) {
      const ids = await this.#redis.zrange(this.#keys.index, 0, PAGE - 1);
      if (ids.length === 0) break;
      purged += await this.#remove(ids);
    }
    for (;;) {
      const ids = await this.#queue.getRanges(['wait', 'delayed', 'prioritized'], 0, PAGE - 1);
      if (ids.length === 0) break;
      await Promise.all(ids.map((id) => this.#queue.remove(id)));
      purged += ids.length;
    }
    return { purged };
  }

  async trim(retention: DeadLetterRetention | undefined = this.#options.retention): Promise<{ purged: number }> {
    let purged = 0;
    if (retention?.maxAgeMs !== undefined) purged += await this.#removeOlderThan(Date.now() - retention.maxAgeMs);
    if (retention?.maxCount !== undefined) {
      const excess = (await this.#redis.zcard(this.#keys.index)) - Math.max(0, retention.maxCount);
      for (let left = excess; left > 0; ) {
        const ids = await this.#redis.zrange(this.#keys.index, 0, Math.min(left, PAGE) - 1);
        if (ids.length === 0) break;
        purged += await this.#remove(ids);
        left -= ids.length;
      }
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
      for await (const page of this.#pages(undefined)) {
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
    for await (const page of this.#pages(undefined)) {
      for (const entry of page) {
        total += 1;
        byGroup[entry.group] = (byGroup[entry.group] ?? 0) + 1;
        byReason[entry.reason] = (byReason[entry.reason] ?? 0) + 1;
      }
    }
    return { total, byGroup, byReason };
  }

  count(): Promise<number> {
    return this.#redis.zcard(this.#keys.index);
  }

  async close(): Promise<void> {
    await this.#queue.close().catch(() => undefined);
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  async disconnect(): Promise<void> {
    this.#redis.disconnect();
    // Not the queue's own disconnect(): it waits for an 'end' that a reconnecting client never emits.
    (await this.#queue.backend.client).disconnect();
  }

  async #record(
    job: FailedCrawlJob,
    options: { classification: FailureClassification; workerId: string; remove: boolean },
  ): Promise<{ created: boolean; removed: boolean }> {
    const id = job.id;
    if (id === undefined || id === '') throw new DeadLetterInputError('cannot dead-letter a job without an id');
    const entry = await this.#entry(job, id, options);
    await this.#ensurePaused();
    // The job first, the index second: if we die in between, the crawl job is
    // still in the failed set, reconcile() records it again, the add is a
    // no-op and the index write reports the entry as new (so it is alerted).
    await this.#queue.add(DEAD_LETTER_JOB_NAME, entry, { jobId: id });
    const created = (await this.#redis.zadd(this.#keys.index, 'NX', Date.parse(entry.lastFailedAt), id)) === 1;
    if (created && this.#options.alerts) {
      try {
        await this.#options.alerts.notify(entry);
      } catch (error) {
        // Un-claim, so recording this job again (reconcile) alerts it then.
        await this.#redis.zrem(this.#keys.index, id).catch(() => 0);
        throw error;
      }
    }
    await this.#redis.del(this.#keys.firstFailed(id));
    let removed = false;
    if (options.remove) {
      // A job that cannot be removed now stays in the failed set; reconcile() removes it later.
      removed = await job.remove().then(
        () => true,
        () => false,
      );
    }
    return { created, removed };
  }

  async #entry(job: FailedCrawlJob, id: string, options: { classification: FailureClassification; workerId: string }): Promise<DeadLetterEntry> {
    const { classification: failure, workerId } = options;
    const lastFailedAt = job.finishedOn ?? Date.now();
    const noted = Number(await this.#redis.get(this.#keys.firstFailed(id)));
    const blockedSince = failure.reason === 'blocked-group' ? job.data.blockedSince : undefined;
    const firstFailedAt = Math.min(lastFailedAt, noted > 0 ? noted : Infinity, blockedSince ?? Infinity);
    return {
      id,
      url: redactUrl(job.data.url),
      group: job.data.group,
      depth: job.data.depth,
      job: job.data,
      jobOptions: { attempts: job.opts.attempts ?? 1 },
      reason: failure.reason,
      errorClass: failure.errorClass,
      message: failure.message,
      status: failure.status,
      attempts: job.attemptsMade,
      firstFailedAt: new Date(firstFailedAt).toISOString(),
      lastFailedAt: new Date(lastFailedAt).toISOString(),
      workerId,
    };
  }

  /** Pauses the DLQ once per instance: even a stray worker must never process an entry. */
  #ensurePaused(): Promise<void> {
    this.#paused ??= (async () => {
      if (!(await this.#queue.isPaused())) await this.#queue.pause();
    })().catch((error: unknown) => {
      this.#paused = undefined;
      throw error;
    });
    return this.#paused;
  }

  async #retryOne(id: string, crawlQueue: CrawlQueueLike, policy: CrawlJobPolicy): Promise<boolean> {
    const entry = await this.show(id);
    if (!entry) {
      await this.#redis.zrem(this.#keys.index, id); // A dangling index member, if any.
      return false;
    }
    const existing = await crawlQueue.getJob(id);
    const state = existing ? await existing.getState() : 'unknown';
    // A finished job with this id would turn the add into a no-op.
    if (existing && (state === 'failed' || state === 'completed')) await existing.remove();
    if (!existing || state === 'failed' || state === 'completed' || state === 'unknown') {
      const { blockedSince: _blockedSince, ...data } = entry.job;
      await crawlQueue.add(CRAWL_JOB_NAME, data, { ...crawlJobOptions(policy), jobId: id });
    }
    // Counted by the index removal: two concurrent retries of one id count once.
    return this.#removeOne(id);
  }

  async #remove(ids: readonly string[]): Promise<number> {
    let removed = 0;
    for (let index = 0; index < ids.length; index += BATCH) {
      const results = await Promise.all(ids.slice(index, index + BATCH).map((id) => this.#removeOne(id)));
      removed += results.filter(Boolean).length;
    }
    return removed;
  }

  async #removeOne(id: string): Promise<boolean> {
    // The job first: a crash in between leaves a dangling index member, which
    // list() skips, rather than an entry job nothing points to.
    await this.#queue.remove(id);
    const [zremmed] = await Promise.all([this.#redis.zrem(this.#keys.index, id), this.#redis.del(this.#keys.firstFailed(id))]);
    return zremmed === 1;
  }

  async #removeOlderThan(cutoffMs: number): Promise<number> {
    let purged = 0;
    for (;;) {
      const ids = await this.#redis.zrangebyscore(this.#keys.index, '-inf', `(${cutoffMs}`, 'LIMIT', 0, PAGE);
      if (ids.length === 0) break;
      purged += await this.#remove(ids);
    }
    return purged;
  }

  /** Ids of all entries, or of one group's, newest first. */
  async #ids(group: string | undefined): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of this.#pages(undefined)) {
      for (const entry of page) if (group === undefined || entry.group === group) ids.push(entry.id);
    }
    return ids;
  }

  /**
   * Entries newest first, a page at a time, since `since`. Pages by score (not
   * offset), so entries recorded meanwhile do not shift the pages.
   */
  async *#pages(since: Date | undefined): AsyncGenerator<DeadLetterEntry[]> {
    const min = since === undefined ? '-inf' : String(since.getTime());
    let max = '+inf';
    let seenAtMax = new Set<string>();
    for (;;) {
      const requested = PAGE + seenAtMax.size;
      const reply = await this.#redis.zrevrangebyscore(this.#keys.index, max, min, 'WITHSCORES', 'LIMIT', 0, requested);
      const pairs: [string, number][] = [];
      for (let index = 0; index + 1 < reply.length; index += 2) pairs.push([reply[index] ?? '', Number(reply[index + 1])]);
      const fresh = pairs.filter(([id]) => !seenAtMax.has(id));
      if (fresh.length === 0) return;
      yield await this.#load(fresh.map(([id]) => id));
      if (pairs.length < requested) return;
      const lowest = fresh[fresh.length - 1]?.[1] ?? 0;
      const atLowest = fresh.filter(([, score]) => score === lowest).map(([id]) => id);
      // Members tied at the boundary score come again in the next page: skip those already seen.
      seenAtMax = String(lowest) === max ? new Set([...seenAtMax, ...atLowest]) : new Set(atLowest);
      max = String(lowest);
    }
  }

  async #load(ids: readonly string[]): Promise<DeadLetterEntry[]> {
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hget(this.#queue.toKey(id), 'data');
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
}
