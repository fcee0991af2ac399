import type { ConnectionOptions } from 'bullmq';
import { redactUrl } from '@crawlq/urls';
import { classifyFailure, classifyFailureMessage, type FailureClassification } from './classify-failure.js';
import type { FailedCrawlJob, CrawlQueueLike } from './crawl-job.js';
import type { AlertScheduler, DeadLetterEntry, DeadLetterRetention } from './dead-letter-entry.js';
import { DEAD_LETTER_JOB_NAME, DeadLetterStore, PAGE } from './dead-letter-store.js';
import { DeadLetterInputError } from './errors.js';
import { isFinalFailure } from './final-failure.js';

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

export interface CreateDeadLetterRecorderOptions {
  /** BullMQ connection (options with `url`, or an ioredis instance). */
  readonly connection: ConnectionOptions;
  readonly namespace: string;
  /** Told about each new entry (`createAlerts()` of @crawlq/alerts); no alerts when absent. */
  readonly alerts?: AlertScheduler;
  /** What `trim()` applies. @default keep everything */
  readonly retention?: DeadLetterRetention;
  /** How long a first-failure time noted by `noteFailedAttempt()` is kept. @default 604800000 (7 days) */
  readonly firstFailureTtlMs?: number;
}

/**
 * The worker side of a namespace's dead-letter queue: what a crawl worker
 * calls when a job fails, exhausts its attempts or was left unrecorded by a
 * worker that died, and the retention it applies. Reviewing entries is
 * `DeadLetterAdmin`'s.
 */
export interface DeadLetterRecorder {
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
  /** Applies the retention (`maxAgeMs`, `maxCount`) given here or at creation. */
  trim(retention?: DeadLetterRetention): Promise<{ purged: number }>;
  close(): Promise<void>;
  /**
   * Drops the connections at once: for a Redis that is gone, where `close()`
   * would wait for it to come back. Calls still waiting never settle.
   */
  disconnect(): Promise<void>;
}

export function createDeadLetterRecorder(options: CreateDeadLetterRecorderOptions): DeadLetterRecorder {
  return new RedisDeadLetterRecorder(options);
}

const DEFAULT_FIRST_FAILURE_TTL_MS = 7 * 24 * 3_600_000;

class RedisDeadLetterRecorder implements DeadLetterRecorder {
  readonly #options: CreateDeadLetterRecorderOptions;
  readonly #store: DeadLetterStore;

  constructor(options: CreateDeadLetterRecorderOptions) {
    this.#options = options;
    this.#store = new DeadLetterStore(options.connection, options.namespace);
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
    await this.#store.redis.set(this.#store.keys.firstFailed(job.id), String(Date.now()), 'PX', ttl, 'NX');
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

  async trim(retention: DeadLetterRetention | undefined = this.#options.retention): Promise<{ purged: number }> {
    let purged = 0;
    if (retention?.maxAgeMs !== undefined) purged += await this.#store.removeOlderThan(Date.now() - retention.maxAgeMs);
    if (retention?.maxCount !== undefined) {
      const excess = (await this.#store.redis.zcard(this.#store.keys.index)) - Math.max(0, retention.maxCount);
      for (let left = excess; left > 0; ) {
        const ids = await this.#store.redis.zrange(this.#store.keys.index, 0, Math.min(left, PAGE) - 1);
        if (ids.length === 0) break;
        purged += await this.#store.remove(ids);
        left -= ids.length;
      }
    }
    return { purged };
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  disconnect(): Promise<void> {
    return this.#store.disconnect();
  }

  async #record(
    job: FailedCrawlJob,
    options: { classification: FailureClassification; workerId: string; remove: boolean },
  ): Promise<{ created: boolean; removed: boolean }> {
    const id = job.id;
    if (id === undefined || id === '') throw new DeadLetterInputError('cannot dead-letter a job without an id');
    const entry = await this.#entry(job, id, options);
    await this.#store.ensurePaused();
    // The job first, the index second: if we die in between, the crawl job is
    // still in the failed set, reconcile() records it again, the add is a
    // no-op and the index write reports the entry as new (so it is alerted).
    await this.#store.queue.add(DEAD_LETTER_JOB_NAME, entry, { jobId: id });
    const created = (await this.#store.redis.zadd(this.#store.keys.index, 'NX', Date.parse(entry.lastFailedAt), id)) === 1;
    if (created && this.#options.alerts) {
      try {
        await this.#options.alerts.notify(entry);
      } catch (error) {
        // Un-claim, so recording this job again (reconcile) alerts it then.
        await this.#store.redis.zrem(this.#store.keys.index, id).catch(() => 0);
        throw error;
      }
    }
    await this.#store.redis.del(this.#store.keys.firstFailed(id));
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
    const noted = Number(await this.#store.redis.get(this.#store.keys.firstFailed(id)));
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
      ...(failure.stack === undefined ? {} : { stack: failure.stack }),
      status: failure.status,
      attempts: job.attemptsMade,
      firstFailedAt: new Date(firstFailedAt).toISOString(),
      lastFailedAt: new Date(lastFailedAt).toISOString(),
      workerId,
    };
  }
}
