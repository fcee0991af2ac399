import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, crawlqCommand, definitionConflicts, formatDuration, formatOptionValue, optionLabel, type CrawlqConfig } from '@crawlq/config';
import { createAlerts, type Alerts, type AlertMailConfig } from '@crawlq/alerts';
import { classifyFailure, createDeadLetterRecorder, type DeadLetterRecorder } from '@crawlq/dead-letter';
import { createFetcher, RetryableFetchError, warmUpFetcher, type Fetcher } from '@crawlq/fetcher';
import { describePaceChange, type GroupLimiter, type PaceChange } from '@crawlq/group-limiter';
import { CRAWL_JOB_RETENTION, holdJobLock, JobSlots, openWorker, QUEUE_NAMES, type CrawlJobData, type CrawlJobResult } from '@crawlq/queue';
import { checkEvictionPolicy, RedisOutageError, watchRedisOutage, shardNamespaces } from '@crawlq/redis';
import type { RobotsPolicy } from '@crawlq/robots';
import { openResultSink, openWarcWriter, startWarcRecovery, type ResultSink, type WarcRecovery, type WarcWriter } from '@crawlq/sink';
import type { Job } from 'bullmq';
import { type CrawlServices, crawlSlotKeys, CrawlStatsRecorder, definitionAuthor, describeResults, fetcherOptionsFrom, GroupWaits, joinCrawlDefinition, openCrawlServices, type PageRecord, refreshCrawlDefinition, resultsTargetOf, stampOfDefinition } from '@crawlq/crawl-control';
import { CRAWL_FINISHED_MESSAGE, REDIS_OUTAGE_MESSAGE } from '../coordination/protocol.js';
import { WorkerStoppingError } from '../errors.js';
import { GroupGate, MAX_INLINE_WAIT_MS } from '../gate/group-gate.js';
import { openRobotsPolicy } from '../gate/robots-fetch.js';
import { serverFetcherOptions, serverGateOptions } from '../gate/server-wiring.js';
import { processCrawlJob } from '../process-crawl-job.js';
import { BacklogReleaser } from './backlog-releaser.js';
import { createRevisitHooks } from '../revisit/revisit-hooks.js';
import { RevisitReleaser } from '../revisit/revisit-releaser.js';
import { recentlyHeld } from './job-lock-check.js';
import { checkOutputs } from './check-outputs.js';
import { redisAnswersWithin, settleWithin } from './stopping.js';
import { redisWarcLease } from './redis-warc-lease.js';
import { openRenderParts, type RenderParts } from '../render/render-parts.js';
import { claimCrawler } from '../handlers/crawler-identity.js';
import { decideFailure } from '../handlers/failure-decision.js';
import { loadCrawler, type LoadedCrawler } from '../handlers/load-crawler.js';
import { createPageHandler } from '../handlers/page-handler.js';
import { RequestMetaStore } from '../handlers/request-meta.js';

/**
 * Jobs a worker process of a paced crawl may hold per request slot
 * (--concurrency): the others sleep until their next start. A crawl with no
 * rate at all holds one per slot: its jobs never sleep, and taking more would
 * drain the queue into shorter jobs (more of BullMQ's work per page).
 */
const JOBS_PER_REQUEST_SLOT = 4;

/** Some rate paces the crawl: the default, --global-rate or a --limit rule's. */
function isPaced(config: CrawlqConfig): boolean {
  return config.rate !== null || config.globalRate !== null || config.limitRules.some((rule) => rule.rate !== undefined && rule.rate !== null);
}

/** Jobs the process takes at once: more than its request slots when some rate paces the crawl (see JOBS_PER_REQUEST_SLOT). */
function jobSlotsFor(config: CrawlqConfig, concurrency: number): number {
  return isPaced(config) ? concurrency * JOBS_PER_REQUEST_SLOT : concurrency;
}

export interface CrawlWorkerOptions {
  readonly config: CrawlqConfig;
  readonly redisUrl: string;
  /** Log lines (warnings, dead letters) with a severity (default info); the app decides where they go. */
  readonly log: (line: string, level?: LogSeverity) => void;
  /**
   * How operators run crawlq here (`crawlq`, `pnpm crawlq`): the commands
   * alert e-mails and a refusal to start tell them to run say it, with
   * `--namespace` when the crawl has one. Only the app knows how it is invoked.
   */
  readonly cli: string;
  readonly onPage?: (record: PageRecord) => void;
  /** Metrics hooks; the app wires them to its metrics package. */
  readonly telemetry?: WorkerTelemetry;
  /** Replaces the Redis-backed group gate (the benchmark's gate-off baseline); production never sets it. */
  readonly limiter?: GroupLimiter;
  /**
   * Called once when Redis has been unreachable for longer than
   * `config.redisOutageLimit`; the worker should then be abandoned. Unset: it
   * waits for Redis however long that takes.
   */
  readonly onRedisOutage?: (error: RedisOutageError) => void;
  /** The crawler whose routes handle the pages (createCrawl); unset: `config.crawler`'s module, else the built-in page record. */
  readonly crawler?: LoadedCrawler;
  /** The backlog releaser's longest idle sleep (tests lengthen it to show what wakes it); production never sets it. */
  readonly releaserIdleMs?: number;
}

export type LogSeverity = 'debug' | 'info' | 'warn' | 'error';

/** What a worker reports as it goes, for metrics; every hook is optional. */
export interface WorkerTelemetry {
  page?(record: PageRecord): void;
  /** A job was deferred: by the group gate (`rate`, `global-rate`, `concurrency`, `paused`), its server (`server-rate`, `server-concurrency`, `server-lookup` while its host's DNS lookup fails) or an unreachable robots.txt (`robots`), for `retryInMs`. */
  denied?(reason: string, retryInMs?: number): void;
  /** Requests repeated: got's retries inside a failed attempt, plus one when BullMQ will retry the attempt. */
  retried?(count: number): void;
  /** A job this process moved to the dead-letter queue, with its reason code. */
  deadLettered?(reason: string): void;
  /** A release by this process changed its group's adaptive pace (`--adaptive`). */
  paceChanged?(change: PaceChange): void;
  /** True once the worker takes jobs, false when it starts to stop. */
  ready?(ready: boolean): void;
}

/** A running worker process's crawl machinery. */
export interface CrawlWorker {
  readonly id: string;
  /**
   * Stops taking jobs, lets in-flight ones finish within `graceMs`, then
   * interrupts the rest (slots given back, jobs back in the queue with no
   * attempt used) and closes everything.
   */
  close(graceMs: number): Promise<void>;
  /**
   * Stops at once without Redis (it is gone, and `close` would wait for it):
   * flushes what is written so far and drops the connections. The jobs in
   * flight stay active in Redis; once it is back, BullMQ's stalled-job check
   * hands them to a worker again, so a page already requested is fetched a
   * second time.
   */
  abandon(): Promise<void>;
  /** Whether Redis answers a PING within `ms` (a stopped server keeps the connection open and never replies). */
  redisAnswers(ms: number): Promise<boolean>;
}

/** How a stopped worker ended: closed gracefully, or abandoned because Redis did not answer once the grace period was over. */
export type WorkerEnd = 'stopped' | 'without-redis';

const RECONCILE_EVERY_MS = 60_000;
/** How often a worker checks the crawl definition's version: a change reaches it within about this long. */
const DEFINITION_POLL_MS = 1_000;

/** How long an abandoned worker waits for its results to be flushed. */
const ABANDON_MS = 5_000;

/** Starts one worker: any number of these, on any machines sharing one Redis, cooperate on one crawl. */
export async function startCrawlWorker(options: CrawlWorkerOptions): Promise<CrawlWorker> {
  const { redisUrl, log, telemetry } = options;
  const id = `${hostname()}:${process.pid}`;
  // Begun now, beside the start-up's round trips, and awaited before the first
  // job: a cold first request reaches the server later after its admission than
  // the pacing's safety margin allows for.
  const fetchPathWarm = warmUpFetcher(fetcherOptionsFrom(options.config));
  // Before the first Redis connection: a worker joining an empty namespace
  // publishes its definition, and one that cannot store its pages must not.
  await checkOutputs(options.config, { log });
  // Loaded before Redis too: a crawler that does not load is an input error, and joins no fleet.
  const crawler = options.crawler ?? (options.config.crawler === undefined ? undefined : await loadCrawler(options.config.crawler));
  const services: CrawlServices = await openCrawlServices(options.config, redisUrl, { role: 'worker', ...(options.limiter ? { limiter: options.limiter } : {}) });
  // Watched from the first connection on: an outage during start-up counts too.
  // Said once per outage; without onRedisOutage a coordinator decides and reports, so only at debug level.
  const { onRedisOutage } = options;
  const outageLevel = onRedisOutage ? 'warn' : 'debug';
  const upTo = onRedisOutage ? `up to ${formatDuration(options.config.redisOutageLimit)} ` : '';
  const outageWatch = watchRedisOutage(services.redis, {
    // On a cluster: the masters of this crawl's slots are the ones that must answer.
    clusterProbeKeys: crawlSlotKeys(services),
    onLost: () => log(`lost the connection to Redis; waiting ${upTo}for it to come back (jobs in flight wait too)`, outageLevel),
    onBack: (downMs) => log(`Redis is back after ${(downMs / 1000).toFixed(1)} s`, outageLevel === 'warn' ? 'info' : 'debug'),
    ...(onRedisOutage ? { limitMs: options.config.redisOutageLimit, onOutage: onRedisOutage } : {}),
  });
  // While Redis is down, every part's connection errors say the same thing again on each reconnect attempt.
  const unlessRedisDown = (line: string, level?: LogSeverity) => {
    if (!outageWatch.down) log(line, level);
  };
  try {
    const joined = await joinCrawlDefinition(services, definitionAuthor('worker'), options.cli);
    log(`following the fleet's crawl definition version ${joined.version} (set by ${joined.setBy} at ${joined.setAt})`);
    await claimCrawler(services.redis, options.config.namespace, crawler?.identity);
    if (crawler) log(`running crawler ${crawler.identity}`);
    const evictionWarning = await checkEvictionPolicy(services.redis);
    if (evictionWarning) log(`warning: ${evictionWarning}`, 'warn');
  } catch (error) {
    outageWatch.stop();
    await services.close();
    throw error;
  }
  // A crawl that renders needs a browser here: refused now, not page by page.
  let rendering: RenderParts;
  try {
    rendering = openRenderParts(services, { log });
  } catch (error) {
    outageWatch.stop();
    await services.close();
    throw error;
  }
  // The crawl-shaping settings are the fleet's from here on; read them through services.config.
  const config = services.config;
  const connection = { url: redisUrl };
  const alerts: Alerts = createAlerts({ connection, namespace: config.namespace, mail: alertMailConfig(config, options.cli), log: (line) => unlessRedisDown(line) });
  const deadLetters: DeadLetterRecorder = createDeadLetterRecorder({ connection, namespace: config.namespace, alerts });
  // Opened before the worker takes jobs: an unreachable database is waited for here, with a message.
  let sink: ResultSink;
  try {
    sink = await openResultSink(resultsTargetOf(config), { namespace: config.namespace, batchSize: config.sinkBatchSize, log });
  } catch (error) {
    outageWatch.stop();
    await Promise.allSettled([alerts.close(), deadLetters.close(), services.close()]);
    throw error;
  }
  let warc: WarcWriter | undefined;
  let warcRecovery: WarcRecovery | undefined;
  if (config.warc !== undefined) {
    const lease = redisWarcLease(services.redis, config.namespace);
    try {
      warc = openWarcWriter({ dir: config.warc, maxFileBytes: config.warcMaxSize, prefix: config.namespace, software: 'crawlq', lease });
    } catch (error) {
      outageWatch.stop();
      await Promise.allSettled([alerts.close(), deadLetters.close(), sink.close(), services.close()]);
      throw error;
    }
    // What a killed worker left `.open` is closed under the names its records carry.
    warcRecovery = startWarcRecovery({ dir: config.warc, prefix: config.namespace, lease, self: [warc.id], log });
  }
  const stats = new CrawlStatsRecorder({ redis: services.redis, namespace: config.namespace, onError: (error) => log(`could not write page counters: ${String(error)}`, 'warn') });
  // Every cut of a group's adaptive pace is a large change: logged with the group and why.
  const gate = new GroupGate(services.limiter, {
    ...serverGateOptions(services),
    onPaceChange: (change) => {
      log(describePaceChange(change));
      telemetry?.paceChanged?.(change);
    },
  });
  // Aborted when a stop outlasts its grace period: jobs still running give
  // their slots back and return to the queue (see close).
  const stopping = new AbortController();
  // Every job in flight listens to it (its waits and its fetch): up to the
  // concurrency, not a leak. Node warns past 10 on stderr, outside the log format.
  setMaxListeners(0, stopping.signal);
  const fetching = new FetchingParts(services, { gate, log, stopping: stopping.signal });
  const waits = new GroupWaits(services.redis, config.namespace);
  // Crawl-delay only ever slows a group down (the limiter caps it); set once per group per process.
  const crawlDelays = new Map<string, number>();
  const applyCrawlDelay = async (group: string, crawlDelayMs: number): Promise<void> => {
    if (crawlDelays.get(group) === crawlDelayMs) return;
    crawlDelays.set(group, crawlDelayMs);
    await services.limiter.setMinInterval(group, crawlDelayMs);
  };

  // Stage two of the frontier: every worker process releases due URLs into the queue.
  const releaser = new BacklogReleaser({
    frontier: () => services.frontier,
    concurrency: config.concurrency,
    onError: (error) => unlessRedisDown(`could not release URLs from the backlog (retrying): ${String(error)}`, 'warn'),
    ...(options.releaserIdleMs === undefined ? {} : { idleMs: options.releaserIdleMs }),
  });

  // A continuous crawl: due URLs go back to their backlogs (idle while --revisit is off).
  const revisitReleaser = new RevisitReleaser({
    frontier: () => services.frontier,
    config: () => services.config,
    onReleased: () => releaser.nudge(),
    onError: (error) => unlessRedisDown(`could not release due revisits (retrying): ${String(error)}`, 'warn'),
  });
  const revisit = createRevisitHooks({ schedule: () => services.frontier.revisits, config: () => services.config });

  // Aborted when a stop begins: a job of several URLs finishes the one in
  // hand and hands the rest back to the backlog, so a graceful stop waits for
  // one request per job, not for every URL a job carries.
  const draining = new AbortController();
  setMaxListeners(0, draining.signal);
  // Once abandoned, jobs fail only because their connections were dropped: nothing to report.
  let abandoned = false;
  // One BullMQ Worker per shard's queue (one for a crawl of one shard), under one cap for the process.
  const shards = shardNamespaces(config.namespace, config.shards);
  // --concurrency bounds the requests a process has under way, not its jobs: a
  // job of several URLs asleep until its next start gives its request slot up
  // (PassOptions.idle), so its process may hold more jobs than slots.
  const requestSlots = new JobSlots(config.concurrency);
  /** Jobs this process has taken and not yet finished (its BullMQ workers' slots in use). */
  let jobsInHand = 0;
  const idle = <T>(wait: () => Promise<T>): Promise<T> => requestSlots.idle(wait);
  const handler = crawler
    ? createPageHandler({ crawler: crawler.crawler, metaStore: new RequestMetaStore(services.redis, config.namespace), sortQuery: config.sortQuery, log })
    : undefined;
  const processJob = (job: Job<CrawlJobData>, token: string | undefined, takenAt: number) => {
    const processing = processPage(job, token, takenAt);
    if (!crawler || !handler) return processing;
    // The crawler's onFailure hook decides a failed attempt's fate.
    return processing.catch(async (error: unknown) => {
      throw await decideFailure(job, error, { crawler: crawler.crawler, handler, log });
    });
  };
  const processPage = (job: Job<CrawlJobData>, token: string | undefined, takenAt: number) =>
    processCrawlJob(job, token, {
      ...(handler ? { handler } : {}),
      signal: stopping.signal,
      draining: draining.signal,
      gate,
      // Read at each URL, not once a job: a job of several URLs started before
      // a change of the crawl definition (user agent, timeouts, robots.txt)
      // follows it from its next URL, and the fetcher it replaced serves only
      // requests already under way until it is closed.
      get fetcher() {
        return fetching.fetcher;
      },
      frontier: services.frontier,
      sink,
      // The job's lock is checked (and renewed) in its own slot before each record.
      ...(token === undefined ? {} : { holdJob: recentlyHeld(() => holdJobLock(services.redis, job, { token, lockDurationMs: config.stallTimeout }), config.stallTimeout, takenAt) }),
      ...(warc ? { warc } : {}),
      storeBody: config.storeBody,
      maxInlineWaitMs: MAX_INLINE_WAIT_MS,
      maxBlockedMs: services.config.maxBlocked,
      maxRedirects: services.config.maxRedirects,
      waits,
      fields: services.config.fields,
      maxLinksPerPage: services.config.maxLinksPerPage,
      get robots() {
        return fetching.robots;
      },
      renderer: rendering.renderer,
      revisit,
      idle,
      // A paced crawl's job done with its URLs goes on with its group's next
      // ones while the jobs waiting in the queue are fewer than this process's
      // free job slots: it would take them all at once anyway, so going on
      // takes no turn from another group (see the frontier's continueJob).
      ...(isPaced(services.config) ? { continueWhileWaiting: () => Math.max(0, jobSlotsFor(services.config, config.concurrency) - jobsInHand) } : {}),
      onCrawlDelay: (group, crawlDelayMs) => applyCrawlDelay(group, crawlDelayMs),
      onSkipped: (record) => stats.skipped(record.skipped),
      onDeferred: (reason, retryInMs) => telemetry?.denied?.(reason, retryInMs),
      onHandedBack: () => releaser.nudge(),
      onPage: (record) => {
        if (record.enqueued > 0) releaser.nudge();
        telemetry?.page?.(record);
        options.onPage?.(record);
        // Awaited by the job: counted before it moves on (see CrawlStatsRecorder).
        return stats.page(record);
      },
    });
  await fetchPathWarm;
  const workers = shards.map((namespace) => openWorker<CrawlJobData, CrawlJobResult>(
    QUEUE_NAMES.crawl,
    (job, token) => {
      // BullMQ took it (and its lock, for a whole lock period) just now.
      const takenAt = performance.now();
      jobsInHand += 1;
      return requestSlots.run(() => processJob(job, token, takenAt)).finally(() => (jobsInHand -= 1));
    },
    {
      connection,
      namespace,
      concurrency: jobSlotsFor(services.config, config.concurrency),
      ...CRAWL_JOB_RETENTION,
      lockDuration: config.stallTimeout,
      stalledInterval: config.stallTimeout,
      // Out of reach: BullMQ's own bound fails a stalled job without running
      // it, which would drop every URL of a job of several not yet fetched.
      // processCrawlJob hands those back first, then applies MAX_STALLS_OF_A_URL.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      onError: (error) => {
        if (!abandoned) unlessRedisDown(`worker error: ${error.message}`, 'error');
      },
    },
  ));
  const onFailed = (job: Job<CrawlJobData> | undefined, error: Error) => {
    if (!job || abandoned) return;
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
  };
  for (const worker of workers) worker.on('failed', onFailed);
  const alertWorker = alerts.startWorker();

  const retention = {
    ...(config.dlqMaxAge === undefined ? {} : { maxAgeMs: config.dlqMaxAge }),
    ...(config.dlqMaxCount === undefined ? {} : { maxCount: config.dlqMaxCount }),
  };
  const reconcileShards = async () => {
    let count = 0;
    for (const queue of services.queues) count += await deadLetters.reconcile(queue, id);
    return count;
  };
  const reconcile = () =>
    reconcileShards()
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

  // A changed definition reaches this worker within a poll: one HMGET of the
  // version while nothing changes, a full read and re-derivation when it does.
  let stamp = stampOfDefinition(services.definition);
  let watching: Promise<void> | undefined;
  const watch = async () => {
    if ((await services.definitions.stamp()) === stamp) return;
    const next = await refreshCrawlDefinition(services);
    stamp = stampOfDefinition(services.definition);
    if (next === null) return;
    log(`following the fleet's crawl definition version ${next.version} (set by ${next.setBy} at ${next.setAt})`);
    for (const conflict of definitionConflicts(options.config, next.values)) {
      log(`warning: this worker was started with ${optionLabel(conflict.option)} ${formatOptionValue(conflict.option, conflict.given)}; it follows the fleet's ${formatOptionValue(conflict.option, conflict.fleet)} now`);
    }
    fetching.refresh();
    for (const worker of workers) worker.concurrency = jobSlotsFor(services.config, config.concurrency);
  };
  const watchTimer = setInterval(() => {
    watching ??= watch()
      .catch((error: unknown) => log(`could not check the crawl definition (retrying): ${String(error)}`))
      .finally(() => (watching = undefined));
  }, DEFINITION_POLL_MS);
  watchTimer.unref();

  let closing: Promise<void> | undefined;
  let abandoning: Promise<void> | undefined;
  return {
    id,
    close(graceMs) {
      closing ??= (async () => {
        draining.abort();
        telemetry?.ready?.(false);
        clearInterval(reconcileTimer);
        clearInterval(watchTimer);
        await watching;
        await Promise.all([releaser.stop(), revisitReleaser.stop()]);
        const graceful = Promise.all(workers.map((worker) => worker.close()));
        const timedOut = await Promise.race([
          graceful.then(() => false),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(true), graceMs).unref()),
        ]);
        // Jobs still running past the grace period are interrupted, not left
        // to the stalled-job check: each aborts its fetch, gives its gate slot
        // back while Redis is still open, and returns to the queue without
        // using an attempt. A robots.txt fetch in flight is cut too (the
        // robots policy listens to the same signal) and stores nothing.
        if (timedOut) {
          log(`grace period of ${graceMs} ms over: interrupting the jobs still running (they go back to the queue)`, 'warn');
          stopping.abort(new WorkerStoppingError(graceMs));
        }
        await graceful;
        await alertWorker.close();
        await Promise.allSettled([alerts.close(), deadLetters.close(), sink.close(), stats.close(), warc?.close(), warcRecovery?.stop(), rendering.close()]);
        fetching.close();
        // Watched until here: Redis gone during a graceful stop still ends in abandon().
        outageWatch.stop();
        await services.close();
      })();
      return closing;
    },
    abandon() {
      abandoning ??= (async () => {
        abandoned = true;
        telemetry?.ready?.(false);
        outageWatch.stop();
        clearInterval(reconcileTimer);
        clearInterval(watchTimer);
        void releaser.stop();
        void revisitReleaser.stop();
        // Nothing here may wait for Redis; what does not finish in time is dropped with the process.
        await settleWithin(ABANDON_MS, [...workers.map((worker) => worker.close(true)), alertWorker.close(true), sink.close(), ...(warc ? [warc.close()] : []), ...(warcRecovery ? [warcRecovery.stop()] : []), rendering.close()]);
        fetching.close();
        await settleWithin(ABANDON_MS, [services.disconnect()]);
      })();
      return abandoning;
    },
    redisAnswers(ms) {
      return redisAnswersWithin(services.redis, ms);
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

/** Alert settings a config describes; the review command they name runs `cli` (see `CrawlWorkerOptions.cli`). */
export function alertMailConfig(config: CrawlqConfig, cli: string): AlertMailConfig {
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
    reviewCommand: crawlqCommand('dlq list', config.namespace, cli),
  };
}

/**
 * Runs a worker until `stop` aborts, then stops taking jobs and lets the
 * in-flight ones finish within the grace period (the rest are interrupted and
 * put back in the queue). Resolves when it has stopped. The app decides what
 * stops it (SIGTERM or SIGINT, the `crawl` coordinator over IPC) and gives
 * the reason: a signal's name is logged, {@link CRAWL_FINISHED_MESSAGE} is a
 * normal end, {@link REDIS_OUTAGE_MESSAGE} stops at once. Only the first
 * reason counts: a second signal must not cut the graceful stop short.
 * Aborted before or during start-up (a quick rollout, an impatient Ctrl-C),
 * the worker stops gracefully once started instead of half-connected.
 *
 * Redis gone for longer than `--redis-outage-limit` (at any point, start-up
 * and graceful stop included) abandons the worker and rejects with a
 * {@link RedisOutageError}; so does nothing when `stopOnRedisOutage` is false
 * (under `crawl`, whose coordinator decides for all its workers and stops
 * them with {@link REDIS_OUTAGE_MESSAGE}: then this resolves once abandoned).
 * A stop that Redis does not let finish (it answers nothing once the grace
 * period is over: stopped, hung, or gone) abandons the worker too and
 * resolves with `without-redis`; the caller should then exit, as connections
 * still waiting for Redis would keep the process alive.
 */
export async function runWorkerUntilStopped(
  options: CrawlWorkerOptions & { readonly stop: AbortSignal; readonly stopOnRedisOutage?: boolean },
): Promise<WorkerEnd> {
  const { config, log } = options;
  let given: RedisOutageError | undefined;
  let reportOutage: (error: RedisOutageError) => void = () => undefined;
  const outage = new Promise<RedisOutageError>((resolve) => {
    reportOutage = resolve;
  });
  const onRedisOutage = (error: RedisOutageError) => {
    given = error;
    reportOutage(error);
  };
  // Listening before the worker starts: a stop during start-up takes effect once started.
  const stopRequested = new Promise<string>((resolve) => {
    const stop = (why: string) => {
      // A crawl that finished stops its workers over IPC: a normal end, not a signal to report.
      if (why === CRAWL_FINISHED_MESSAGE) log('crawl finished: finishing in-flight jobs', 'debug');
      else if (why === REDIS_OUTAGE_MESSAGE) log('the crawl coordinator gave up on Redis: stopping now', 'debug');
      else log(`${why}: finishing in-flight jobs (up to ${config.gracePeriod} ms)`);
      resolve(why);
    };
    if (options.stop.aborted) stop(String(options.stop.reason));
    else options.stop.addEventListener('abort', () => stop(String(options.stop.reason)), { once: true });
  });
  const starting = startCrawlWorker({ ...options, ...(options.stopOnRedisOutage === false ? {} : { onRedisOutage }) });
  const started = await Promise.race([starting, outage]);
  if (started instanceof RedisOutageError) {
    // Still starting against a Redis that is gone: nothing to flush yet; the process ends with the error.
    starting.catch(() => undefined);
    throw started;
  }
  const worker = started;
  log(`started (concurrency ${config.concurrency}, results to ${describeResults(config)}${config.warc === undefined ? '' : `, WARC to ${config.warc}`})`);
  const why = await Promise.race([stopRequested, outage]);
  if (why !== REDIS_OUTAGE_MESSAGE && !(why instanceof RedisOutageError)) {
    const closed = await Promise.race([closeWithinGrace(worker, config.gracePeriod), outage]);
    if (closed === 'closed') {
      log('stopped');
      return 'stopped';
    }
    if (closed === 'redis-silent') {
      // A stop must not wait out --redis-outage-limit (nor a Redis stopped for good): the grace period is what was promised.
      await worker.abandon();
      log('Redis did not answer once the grace period was over: stopped without it; the jobs in flight go back to the queue once it is back', 'warn');
      return 'without-redis';
    }
  }
  await worker.abandon();
  log('stopped without Redis: the jobs in flight go back to the queue once it is back', 'debug');
  if (given) throw given;
  return 'without-redis';
}

/** How long past the grace period a closing worker may take while Redis answers nothing, before it is abandoned. */
const STOP_MARGIN_MS = 1_000;
/** How long a PING may go unanswered before Redis counts as silent (a loaded machine answers well within it). */
const REDIS_ANSWER_MS = 2_000;

/**
 * Closes the worker gracefully, as long as Redis lets it: once the grace
 * period (and a short margin for the interrupted jobs to go back) is over, a
 * Redis that does not answer a PING within REDIS_ANSWER_MS ends the wait. A close
 * that is slow for another reason (a database holding records) is waited
 * for while Redis answers.
 */
async function closeWithinGrace(worker: CrawlWorker, graceMs: number): Promise<'closed' | 'redis-silent'> {
  let closed = false;
  const closing = worker.close(graceMs).then(() => {
    closed = true;
  });
  // Unref'd: a worker that has closed exits at once, not when this timer is due.
  const waitUpTo = (ms: number) => Promise.race([closing, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  await waitUpTo(graceMs + STOP_MARGIN_MS);
  while (!closed) {
    if (!(await worker.redisAnswers(REDIS_ANSWER_MS)) && !closed) return 'redis-silent';
    await waitUpTo(REDIS_ANSWER_MS);
  }
  return 'closed';
}

/**
 * The fetcher and robots.txt policy built from the definition in force. A
 * change to what they read (user agent, timeouts, retries, body and redirect
 * caps, robots on/off) builds new ones for the next URLs; the old fetcher is
 * closed once its requests can no longer be running.
 */
class FetchingParts {
  readonly #services: CrawlServices;
  readonly #gate: GroupGate;
  readonly #log: (line: string) => void;
  readonly #stopping: AbortSignal;
  #key = '';
  #fetcher!: Fetcher;
  #robots: RobotsPolicy | undefined;
  readonly #retired = new Set<Fetcher>();

  constructor(services: CrawlServices, parts: { gate: GroupGate; log: (line: string) => void; stopping: AbortSignal }) {
    this.#services = services;
    this.#gate = parts.gate;
    this.#log = parts.log;
    this.#stopping = parts.stopping;
    this.refresh();
  }

  get fetcher(): Fetcher {
    return this.#fetcher;
  }

  get robots(): RobotsPolicy | undefined {
    return this.#robots;
  }

  refresh(): void {
    const config = this.#services.config;
    const fetcherOptions = { ...fetcherOptionsFrom(config), ...serverFetcherOptions(this.#services) };
    const key = canonicalJson([fetcherOptions, config.ignoreRobots, config.robotsTtl, config.maxCrawlDelay, config.robotsRetryBudget, config.maxPause]);
    if (key === this.#key) return;
    const first = this.#key === '';
    this.#key = key;
    const previous = first ? undefined : this.#fetcher;
    this.#fetcher = createFetcher(fetcherOptions);
    this.#robots = config.ignoreRobots ? undefined : openRobotsPolicy(this.#services, this.#fetcher, { postponeWhenPaused: true, gate: this.#gate, signal: this.#stopping });
    if (!this.#robots) this.#log('robots.txt is ignored (--ignore-robots)');
    if (previous) {
      this.#retired.add(previous);
      // Requests that started before the change finish on the old fetcher.
      const drainMs = (config.requestTimeout + config.fetchBackoff * 4) * (config.fetchRetries + 1) + 5_000;
      setTimeout(() => {
        this.#retired.delete(previous);
        previous.close();
      }, drainMs).unref();
    }
  }

  close(): void {
    this.#fetcher.close();
    for (const fetcher of this.#retired) fetcher.close();
    this.#retired.clear();
  }
}

