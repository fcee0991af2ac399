import { hostname } from 'node:os';
import { join } from 'node:path';
import type { CrawlqConfig } from '@crawlq/config';
import { classifyFailure, createAlerts, createDeadLetters, type Alerts, type AlertMailConfig, type DeadLetters } from '@crawlq/dead-letter';
import { createFetcher, RetryableFetchError } from '@crawlq/fetcher';
import type { GroupLimiter } from '@crawlq/group-limiter';
import { CRAWL_JOB_RETENTION, QUEUE_NAMES, queuePrefix, type CrawlJobData, type CrawlJobResult } from '@crawlq/queue';
import { openJsonlSink } from '@crawlq/sink';
import { Worker, type Job } from 'bullmq';
import { openCrawlServices, publishLimitPolicy, type CrawlServices } from './crawl-services.js';
import { CrawlStatsRecorder } from './crawl-stats.js';
import { GroupGate, MAX_INLINE_WAIT_MS } from './group-gate.js';
import { openRobotsPolicy } from './robots-fetch.js';
import { fetcherOptionsFrom } from './fetcher-options.js';
import type { PageRecord } from './page-record.js';
import { processCrawlJob } from './process-crawl-job.js';

export interface CrawlWorkerOptions {
  readonly config: CrawlqConfig;
  readonly redisUrl: string;
  /** Log lines (warnings, dead letters) with a severity (default info); the app decides where they go. */
  readonly log: (line: string, level?: LogSeverity) => void;
  readonly onPage?: (record: PageRecord) => void;
  /** Metrics hooks; the app wires them to its metrics package. */
  readonly telemetry?: WorkerTelemetry;
  /** Replaces the Redis-backed group gate (the benchmark's gate-off baseline); production never sets it. */
  readonly limiter?: GroupLimiter;
}

export type LogSeverity = 'debug' | 'info' | 'warn' | 'error';

/** What a worker reports as it goes, for metrics; every hook is optional. */
export interface WorkerTelemetry {
  page?(record: PageRecord): void;
  /** The group gate deferred a job (`rate`, `concurrency`, `paused`). */
  denied?(reason: string): void;
  /** Requests repeated: got's retries inside a failed attempt, plus one when BullMQ will retry the attempt. */
  retried?(count: number): void;
  /** A job this process moved to the dead-letter queue, with its reason code. */
  deadLettered?(reason: string): void;
  /** True once the worker takes jobs, false when it starts to stop. */
  ready?(ready: boolean): void;
}

/** A running worker process's crawl machinery. */
export interface CrawlWorker {
  readonly id: string;
  /** Stops taking jobs, lets in-flight ones finish within `graceMs`, then closes everything. */
  close(graceMs: number): Promise<void>;
}

const RECONCILE_EVERY_MS = 60_000;

/** What `crawl` sends its worker processes over IPC when the frontier is drained. */
export const CRAWL_FINISHED_MESSAGE = 'crawlq:crawl-finished';

/** Starts one worker: any number of these, on any machines sharing one Redis, cooperate on one crawl. */
export async function startCrawlWorker(options: CrawlWorkerOptions): Promise<CrawlWorker> {
  const { config, redisUrl, log, telemetry } = options;
  const id = `${hostname()}:${process.pid}`;
  const services: CrawlServices = await openCrawlServices(config, redisUrl, { role: 'worker', ...(options.limiter ? { limiter: options.limiter } : {}) });
  const warning = await publishLimitPolicy(services);
  if (warning) log(`warning: ${warning}`, 'warn');
  const connection = { url: redisUrl };
  const alerts: Alerts = createAlerts({ connection, namespace: config.namespace, mail: alertMailConfig(config), log: (line) => log(line) });
  const deadLetters: DeadLetters = createDeadLetters({ connection, namespace: config.namespace, alerts });
  const fetcher = createFetcher(fetcherOptionsFrom(config));
  const sink = openJsonlSink(config.out);
  const stats = new CrawlStatsRecorder({ redis: services.redis, namespace: config.namespace, onError: (error) => log(`could not write page counters: ${String(error)}`, 'warn') });
  const gate = new GroupGate(services.limiter);
  const robots = config.ignoreRobots ? undefined : openRobotsPolicy(services, fetcher);
  if (!robots) log('robots.txt is ignored (--ignore-robots)');
  // Crawl-delay only ever slows a group down (the limiter caps it); set once per group per process.
  const crawlDelays = new Map<string, number>();
  const applyCrawlDelay = async (group: string, crawlDelayMs: number): Promise<void> => {
    if (crawlDelays.get(group) === crawlDelayMs) return;
    crawlDelays.set(group, crawlDelayMs);
    await services.limiter.setMinInterval(group, crawlDelayMs);
  };

  const worker = new Worker<CrawlJobData, CrawlJobResult>(
    QUEUE_NAMES.crawl,
    (job, token) =>
      processCrawlJob(job, token, {
        gate,
        fetcher,
        frontier: services.frontier,
        sink,
        maxInlineWaitMs: MAX_INLINE_WAIT_MS,
        maxBlockedMs: config.maxBlocked,
        maxRedirects: config.maxRedirects,
        fields: config.fields,
        ...(robots ? { robots } : {}),
        onCrawlDelay: (group, crawlDelayMs) => applyCrawlDelay(group, crawlDelayMs),
        onSkipped: (record) => stats.skipped(record.skipped),
        onDeferred: (reason) => telemetry?.denied?.(reason),
        onPage: (record) => {
          stats.page(record);
          telemetry?.page?.(record);
          options.onPage?.(record);
        },
      }),
    {
      connection,
      prefix: queuePrefix(config.namespace),
      concurrency: config.concurrency,
      ...CRAWL_JOB_RETENTION,
      lockDuration: config.stallTimeout,
      stalledInterval: config.stallTimeout,
      ...(config.globalRate ? { limiter: { max: config.globalRate.max, duration: config.globalRate.durationMs } } : {}),
    },
  );
  worker.on('failed', (job: Job<CrawlJobData> | undefined, error: Error) => {
    if (!job) return;
    // Every failed attempt is noted (first failure time); the final one becomes a dead letter.
    deadLetters
      .handleFailed(job, error, id)
      .then(({ final, created }) => {
        const repeated = fetchRetriesOf(error) + (final ? 0 : 1);
        if (repeated > 0) telemetry?.retried?.(repeated);
        if (!created) return;
        telemetry?.deadLettered?.(classifyFailure(error).reason);
        log(`dead-lettered ${job.data.url}: ${error.message}`, 'warn');
      })
      .catch((recordError: unknown) => log(`could not dead-letter ${job.data.url} now (reconciled later): ${String(recordError)}`, 'error'));
  });
  worker.on('error', (error) => log(`worker error: ${error.message}`, 'error'));
  const alertWorker = alerts.startWorker();

  const retention = {
    ...(config.dlqMaxAge === undefined ? {} : { maxAgeMs: config.dlqMaxAge }),
    ...(config.dlqMaxCount === undefined ? {} : { maxCount: config.dlqMaxCount }),
  };
  const reconcile = () =>
    deadLetters
      .reconcile(services.queue, id)
      .then(async (count) => {
        if (count > 0) log(`reconciled ${count} dead letter(s) a stopped worker had not recorded`);
        // Entries stay until reviewed unless a retention is configured.
        if (Object.keys(retention).length > 0) {
          const { purged } = await deadLetters.trim(retention);
          if (purged > 0) log(`retention: deleted ${purged} old dead letter(s)`);
        }
      })
      .catch((error: unknown) => log(`dead-letter reconcile failed: ${String(error)}`, 'error'));
  await reconcile();
  const reconcileTimer = setInterval(() => void reconcile(), RECONCILE_EVERY_MS);
  reconcileTimer.unref();
  telemetry?.ready?.(true);

  let closing: Promise<void> | undefined;
  return {
    id,
    close(graceMs) {
      closing ??= (async () => {
        telemetry?.ready?.(false);
        clearInterval(reconcileTimer);
        const graceful = worker.close();
        const timedOut = await Promise.race([
          graceful.then(() => false),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(true), graceMs).unref()),
        ]);
        // Jobs still running past the grace period are abandoned to BullMQ's
        // stalled-job check: another worker takes them over, nothing is lost.
        if (timedOut) await worker.close(true);
        await alertWorker.close();
        await Promise.allSettled([alerts.close(), deadLetters.close(), sink.close(), stats.close()]);
        fetcher.close();
        await services.close();
      })();
      return closing;
    },
  };
}

/** got's retries inside a failed attempt: the fetch error carries them, possibly as the cause of a permanent failure. */
function fetchRetriesOf(error: unknown): number {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current instanceof RetryableFetchError) return current.retries;
  }
  return 0;
}

/** Alert settings a config describes. */
export function alertMailConfig(config: CrawlqConfig): AlertMailConfig {
  return {
    ...(config.smtpUrl === undefined ? {} : { smtpUrl: config.smtpUrl }),
    ...(config.smtpUser === undefined ? {} : { smtpUser: config.smtpUser }),
    ...(config.smtpPassword === undefined ? {} : { smtpPassword: config.smtpPassword }),
    from: config.alertFrom,
    to: config.alertTo,
    outboxDir: config.outboxDir ?? join(config.stateDir, 'outbox'),
    firstDelayMs: config.alertDelay,
    windowMs: config.alertWindow,
    ...(config.dashboardUrl === undefined ? {} : { dashboardUrl: config.dashboardUrl }),
    reviewCommand: 'pnpm crawlq dlq list',
  };
}

/**
 * Runs a worker until SIGTERM or SIGINT, then stops taking jobs and lets the
 * in-flight ones finish within the grace period. Resolves when it has stopped.
 */
export async function runWorkerUntilSignalled(options: CrawlWorkerOptions): Promise<void> {
  const { config, log } = options;
  // Listening before the worker starts: a signal during start-up (a quick
  // rollout, an impatient Ctrl-C) stops it gracefully once started, instead
  // of killing it half-connected.
  // `on`, not `once`: Ctrl-C under `crawl` delivers SIGINT and then the
  // parent's SIGTERM; a second signal must not kill the graceful stop.
  const stopRequested = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (why: NodeJS.Signals | typeof CRAWL_FINISHED_MESSAGE) => {
      if (stopping) return;
      stopping = true;
      // A crawl that finished stops its workers over IPC: a normal end, not a signal to report.
      if (why === CRAWL_FINISHED_MESSAGE) log(`crawl finished: finishing in-flight jobs`, 'debug');
      else log(`${why}: finishing in-flight jobs (up to ${config.gracePeriod} ms)`);
      process.off('message', onMessage);
      // The IPC channel would keep this process alive after the worker stops.
      if (process.connected) process.disconnect();
      resolve();
    };
    const onMessage = (message: unknown) => {
      if (message === CRAWL_FINISHED_MESSAGE) stop(CRAWL_FINISHED_MESSAGE);
    };
    process.on('SIGTERM', stop).on('SIGINT', stop).on('message', onMessage);
  });
  const worker = await startCrawlWorker(options);
  log(`started (concurrency ${config.concurrency}, results to ${config.out})`);
  await stopRequested;
  await worker.close(config.gracePeriod);
  log('stopped');
}
