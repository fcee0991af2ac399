import { setTimeout as sleep } from 'node:timers/promises';
import { DelayedError, type ConnectionOptions, type Job, type JobsOptions, type Queue, type Worker } from 'bullmq';
import type { AlertScheduler, DeadLetterEntry } from '@crawlq/dead-letter';
import { QUEUE_NAMES, openQueue, openWorker } from '@crawlq/queue';
import { openRedisFrom, type RedisClient } from '@crawlq/redis';
import {
  DEFAULT_DELIVERY_POLICY,
  DEFAULT_FIRST_DELAY_MS,
  DEFAULT_WINDOW_MS,
  type AlertDeliveryPolicy,
  type AlertMailConfig,
} from './alert-config.js';
import { accumulateAlertEvent } from './lua/accumulate-alert-event.js';
import { bumpDigestSeq } from './lua/bump-digest-seq.js';
import { takeDigest } from './lua/take-digest.js';
import { MAX_DIGEST_EXAMPLES, digestFromTaken, type Digest, type DigestExample } from './digest.js';
import { renderDigestEmail } from './digest-email.js';
import { alertKeys, type AlertKeys } from './keys.js';
import { createMailDelivery, type MailDelivery } from './mail-delivery.js';
import { redactUrl } from '@crawlq/urls';

/** BullMQ job name of a digest in the `alerts` queue. */
export const DIGEST_JOB_NAME = 'digest';
/** Custom backoff type of digest jobs: exponential, capped at `maxBackoffMs`. */
export const DIGEST_BACKOFF_TYPE = 'capped-exponential';

/** Data of a digest job. */
export interface DigestJobData {
  /** Which digest this is: events accumulated while the state's `seq` was this number. */
  readonly seq: number;
  /** Set once the job has taken its events, before the first send. */
  readonly digest?: Digest;
  /** Set after a successful send, so a re-run after a crash does not send again. */
  readonly sentAt?: string;
  readonly outboxFile?: string;
}

/** Return value of a digest job. */
export interface DigestJobResult {
  readonly sent: boolean;
  readonly outboxFile?: string;
  readonly total?: number;
}

/** What `flush()` did. */
export interface FlushResult {
  /** A digest e-mail went out (or was written to the outbox). */
  readonly sent: boolean;
  /** The `.eml` file written, without SMTP. */
  readonly outboxFile?: string;
  /** A digest is still queued in Redis (SMTP down): the next alert worker sends it. */
  readonly pendingInRedis?: boolean;
  /** Why a digest could not be sent now. */
  readonly error?: string;
}

export interface CreateAlertsOptions {
  /** BullMQ connection (options with `url`, or an ioredis instance). */
  readonly connection: ConnectionOptions;
  readonly namespace: string;
  readonly mail: AlertMailConfig;
  /** Retry policy of digest jobs while SMTP is down. */
  readonly delivery?: AlertDeliveryPolicy;
  /** Log lines (sent, retrying, given up). @default writes to stderr */
  readonly log?: (line: string) => void;
  /** How long `flush()` waits for a digest to go out. @default 30000 */
  readonly flushTimeoutMs?: number;
}

/**
 * Fleet-wide alert digests. Every dead-letter event is added to one pending
 * set in Redis; a digest job with a deterministic id (`digest-<seq>`) sends
 * them: the first within `firstDelayMs` after a quiet window, then at most one
 * per `windowMs`, however many workers report events or run alert workers.
 */
export interface Alerts extends AlertScheduler {
  /** Adds a dead-letter event to the pending digest and makes sure the digest job is scheduled. */
  notify(entry: DeadLetterEntry): Promise<void>;
  /** Starts an alert worker (concurrency 1) in this process; each crawl worker process runs one. */
  startWorker(): Worker<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>;
  /**
   * Sends any pending digest now (ignoring the window), using this process's
   * alert worker or a temporary one, and reports what happened. If SMTP is
   * down the digest stays queued in Redis (`pendingInRedis`).
   */
  flush(): Promise<FlushResult>;
  /** Closes the workers this instance started, its queue and connections. */
  close(): Promise<void>;
}

/** @throws AlertConfigError when `mail` cannot work (see `AlertMailConfig`). */
export function createAlerts(options: CreateAlertsOptions): Alerts {
  return new RedisAlerts(options);
}

class RedisAlerts implements Alerts {
  readonly #options: CreateAlertsOptions;
  readonly #keys: AlertKeys;
  readonly #redis: RedisClient;
  readonly #queue: Queue<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>;
  readonly #workers = new Set<Worker<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>>();
  readonly #delivery: Required<AlertDeliveryPolicy>;
  readonly #firstDelayMs: number;
  readonly #windowMs: number;
  readonly #log: (line: string) => void;
  readonly #mail: MailDelivery;

  constructor(options: CreateAlertsOptions) {
    // First, before any connection opens: a mail configuration that cannot work fails at start-up.
    this.#mail = createMailDelivery(options.mail);
    this.#options = options;
    this.#keys = alertKeys(options.namespace);
    this.#redis = openRedisFrom(options.connection);
    this.#queue = openQueue<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>(QUEUE_NAMES.alerts, options);
    this.#delivery = { ...DEFAULT_DELIVERY_POLICY, ...options.delivery };
    this.#firstDelayMs = options.mail.firstDelayMs ?? DEFAULT_FIRST_DELAY_MS;
    this.#windowMs = options.mail.windowMs ?? DEFAULT_WINDOW_MS;
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  async notify(entry: DeadLetterEntry): Promise<void> {
    const example: DigestExample = { id: entry.id, url: redactUrl(entry.url), group: entry.group, reason: entry.reason, status: entry.status };
    const at = Date.parse(entry.lastFailedAt);
    const { seq, lastDigestAt, now } = await accumulateAlertEvent.run(
      this.#redis,
      [this.#keys.pending, this.#keys.pendingExamples, this.#keys.state],
      [entry.group, entry.reason, JSON.stringify(example), MAX_DIGEST_EXAMPLES, Number.isFinite(at) ? at : Date.now()],
    );
    // Every reporter adds the same job id: BullMQ keeps the first, so ten
    // workers schedule one digest, at the earliest time any of them asked for.
    await this.#schedule(seq, this.#sendAt(now, lastDigestAt) - now);
  }

  startWorker(): Worker<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME> {
    const worker = this.#createWorker();
    // Events whose digest job was lost (a reporter died between the two
    // steps of notify) or failed before taking them get a job again.
    this.#ensureScheduled(false).catch((error: unknown) => this.#log(`alerts: could not check pending digests: ${String(error)}`));
    return worker;
  }

  async flush(): Promise<FlushResult> {
    const timeoutMs = this.#options.flushTimeoutMs ?? 30_000;
    await this.#redis.set(this.#keys.flush, '1', 'PX', timeoutMs + 10_000);
    let temporary: Worker<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME> | undefined;
    try {
      await this.#ensureScheduled(true);
      const jobs = (await this.#queue.getJobs(['delayed', 'waiting', 'prioritized', 'active'])).filter(
        (job): job is Job<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME> & { id: string } => job?.id !== undefined,
      );
      if (jobs.length === 0) return { sent: false, pendingInRedis: false };
      const baseline = new Map(jobs.map((job) => [job.id, job.attemptsMade]));
      for (const job of jobs) {
        // Another worker may promote or take it at the same moment; that is fine.
        if (await job.isDelayed()) await job.promote().catch(() => undefined);
      }
      if (this.#workers.size === 0) temporary = this.#createWorker();
      return await this.#awaitDigests(baseline, Date.now() + timeoutMs);
    } finally {
      await temporary?.close();
      await this.#redis.del(this.#keys.flush).catch(() => 0);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#workers].map((worker) => worker.close()));
    this.#workers.clear();
    await this.#queue.close().catch(() => undefined);
    this.#mail.close();
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  #sendAt(now: number, lastDigestAt: number): number {
    return Math.max(now + this.#firstDelayMs, lastDigestAt > 0 ? lastDigestAt + this.#windowMs : 0);
  }

  async #schedule(seq: number, delayMs: number): Promise<void> {
    const options: JobsOptions = {
      jobId: `digest-${seq}`,
      delay: Math.max(0, Math.round(delayMs)),
      attempts: this.#delivery.attempts,
      backoff: { type: DIGEST_BACKOFF_TYPE, delay: this.#delivery.backoffMs },
      // Kept for a while: a late duplicate add of this id must find it and do nothing.
      removeOnComplete: { count: 1000 },
      // Never lost: a digest that exhausted its attempts stays in failed, with its data.
      removeOnFail: false,
    };
    await this.#queue.add(DIGEST_JOB_NAME, { seq }, options);
  }

  /** Makes sure pending events have a live digest job; `now` schedules it without delay. */
  async #ensureScheduled(now: boolean): Promise<void> {
    const [total, seqText, lastText] = await Promise.all([
      this.#redis.hget(this.#keys.pending, 'total'),
      this.#redis.hget(this.#keys.state, 'seq'),
      this.#redis.hget(this.#keys.state, 'lastDigestAt'),
    ]);
    if (!total || Number(total) <= 0) return;
    let seq = Number(seqText ?? '1');
    const job = await this.#queue.getJob(`digest-${seq}`);
    const state = job ? await job.getState() : 'unknown';
    if (job && state === 'failed') {
      await job.retry('failed', { resetAttemptsMade: true });
      return;
    }
    if (state === 'completed') {
      // The state hash was reset while old digest jobs remain: move past the used id.
      seq = await bumpDigestSeq.run(this.#redis, [this.#keys.state], [seq]);
    } else if (job) {
      return;
    }
    const clock = Date.now();
    await this.#schedule(seq, now ? 0 : this.#sendAt(clock, Number(lastText ?? '0')) - clock);
  }

  #createWorker(): Worker<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME> {
    const { backoffMs, maxBackoffMs, attempts } = this.#delivery;
    const worker = openWorker<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>(
      QUEUE_NAMES.alerts,
      (job, token) => this.#process(job, token),
      {
        connection: this.#options.connection,
        namespace: this.#options.namespace,
        concurrency: 1,
        settings: {
          backoffStrategy: (attemptsMade: number) => Math.min(maxBackoffMs, backoffMs * 2 ** Math.max(0, attemptsMade - 1)),
        },
        onError: (error) => this.#log(`alerts: worker error: ${error.message}`),
      },
    );
    worker.on('failed', (job, error) => {
      if (!job) return;
      const final = job.attemptsMade >= (job.opts.attempts ?? attempts);
      this.#log(
        final
          ? `alerts: digest ${job.id ?? '?'} could not be sent after ${job.attemptsMade} attempts; kept in the failed set of the alerts queue: ${error.message}`
          : `alerts: digest ${job.id ?? '?'} not sent (attempt ${job.attemptsMade}/${job.opts.attempts ?? attempts}), will retry: ${error.message}`,
      );
    });
    worker.on('closed', () => this.#workers.delete(worker));
    this.#workers.add(worker);
    return worker;
  }

  async #process(job: Job<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>, token: string | undefined): Promise<DigestJobResult> {
    const jobId = job.id ?? `digest-${job.data.seq}`;
    if (job.data.sentAt !== undefined) {
      // Sent, then the process died before BullMQ recorded completion: do not send twice.
      return { sent: true, ...(job.data.outboxFile ? { outboxFile: job.data.outboxFile } : {}), total: job.data.digest?.total ?? 0 };
    }
    let digest = job.data.digest;
    if (digest === undefined) {
      const taken = await this.#take(job, jobId, token);
      if (taken === undefined) return { sent: false };
      digest = taken;
    }
    const email = renderDigestEmail(digest, { reviewCommand: this.#options.mail.reviewCommand, dashboardUrl: this.#options.mail.dashboardUrl });
    const fileStem = `crawlq-${this.#options.namespace}-${digest.takenAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${jobId}`;
    const delivery = await this.#mail.send(email, { id: jobId, fileStem });
    await job.updateData({ ...job.data, digest, sentAt: new Date().toISOString(), ...(delivery.outboxFile ? { outboxFile: delivery.outboxFile } : {}) });
    this.#log(
      delivery.outboxFile
        ? `alerts: ${digest.total} dead-lettered page(s) reported in ${delivery.outboxFile} (no SMTP configured)`
        : `alerts: ${digest.total} dead-lettered page(s) reported by e-mail to ${this.#options.mail.to.join(', ')}`,
    );
    return { sent: true, ...(delivery.outboxFile ? { outboxFile: delivery.outboxFile } : {}), total: digest.total };
  }

  /** Takes the pending events into this job, or defers the job to the end of the window. */
  async #take(job: Job<DigestJobData, DigestJobResult, typeof DIGEST_JOB_NAME>, jobId: string, token: string | undefined): Promise<Digest | undefined> {
    const keys = this.#keys;
    const reply = await takeDigest.run(
      this.#redis,
      [keys.pending, keys.pendingExamples, keys.state, keys.taken(jobId), keys.takenExamples(jobId), keys.flush],
      [job.data.seq, this.#windowMs],
    );
    switch (reply.outcome) {
      case 'early':
        // Not an attempt: another digest went out less than a window ago.
        await job.moveToDelayed(reply.notBefore, token);
        throw new DelayedError();
      case 'taken': {
        const digest = digestFromTaken({
          id: jobId,
          namespace: this.#options.namespace,
          fields: reply.fields,
          examples: reply.examples,
        });
        // Stored before sending: a failed send is retried with this same digest.
        await job.updateData({ ...job.data, digest });
        await this.#redis.del(keys.taken(jobId), keys.takenExamples(jobId));
        return digest;
      }
      case 'stale':
      case 'empty':
        return undefined; // Nothing for this job to send.
    }
  }

  async #awaitDigests(baseline: ReadonlyMap<string, number>, deadline: number): Promise<FlushResult> {
    const outcomes = new Map<string, FlushResult>();
    while (outcomes.size < baseline.size && Date.now() < deadline) {
      for (const [id, attemptsBefore] of baseline) {
        if (outcomes.has(id)) continue;
        const job = await this.#queue.getJob(id);
        if (!job) {
          outcomes.set(id, { sent: true });
          continue;
        }
        const state = await job.getState();
        // Read again once settled: a job that finished between the read and its
        // state has its result only in a fresh read (the first said not sent).
        const settled = state === 'completed' || state === 'failed' ? ((await this.#queue.getJob(id)) ?? job) : job;
        if (state === 'completed') {
          const result = settled.returnvalue as DigestJobResult | null;
          outcomes.set(id, { sent: result?.sent ?? false, ...(result?.outboxFile ? { outboxFile: result.outboxFile } : {}) });
        } else if (state === 'failed' || settled.attemptsMade > attemptsBefore) {
          outcomes.set(id, { sent: false, pendingInRedis: true, error: settled.failedReason || 'delivery failed' });
        }
      }
      if (outcomes.size < baseline.size) await sleep(50);
    }
    for (const id of baseline.keys()) {
      if (!outcomes.has(id)) outcomes.set(id, { sent: false, pendingInRedis: true, error: 'timed out waiting for the alert to be sent' });
    }
    const all = [...outcomes.values()];
    const outboxFile = all.findLast((outcome) => outcome.outboxFile !== undefined)?.outboxFile;
    const error = all.find((outcome) => outcome.error !== undefined)?.error;
    return {
      sent: all.some((outcome) => outcome.sent),
      pendingInRedis: all.some((outcome) => outcome.pendingInRedis === true),
      ...(outboxFile === undefined ? {} : { outboxFile }),
      ...(error === undefined ? {} : { error }),
    };
  }
}
