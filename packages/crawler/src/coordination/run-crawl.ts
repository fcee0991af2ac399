import type { ChildProcess } from 'node:child_process';
import { formatDuration, type CrawlqConfig } from '@crawlq/config';
import { createAlerts } from '@crawlq/alerts';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import type { AddResult } from '@crawlq/frontier';
import { frontierKeys } from '@crawlq/frontier';
import { watchRedisOutage, type RedisOutageError } from '@crawlq/redis';
import { clearNamespace, crawlSlotKeys, type CrawlStatus, definitionAuthor, openCrawlServices, publishCrawlDefinition, readCrawlStatus, Seeding } from '@crawlq/crawl-control';
import { alertMailConfig } from '../worker/crawl-worker.js';
import { CRAWL_FINISHED_MESSAGE, REDIS_OUTAGE_MESSAGE } from './protocol.js';
import { checkOutputs } from '../worker/check-outputs.js';
import { redisAnswersWithin, settleWithin } from '../worker/stopping.js';
import { CrawlStoppedWithoutRedisError } from '../errors.js';
import { claimCrawler } from '../handlers/crawler-identity.js';
import { loadCrawler } from '../handlers/load-crawler.js';
import { isContinuous } from '../revisit/revisit-releaser.js';
import { readSitemaps } from '../seeding/sitemap-reader.js';

export interface RunCrawlOptions {
  readonly config: CrawlqConfig;
  readonly redisUrl: string;
  readonly seeds: readonly string[];
  /** Starts worker process number `index` (the app knows how to launch itself). */
  readonly spawnWorker: (index: number) => ChildProcess;
  readonly log: (line: string) => void;
  /** How operators run crawlq here, for the command the alert e-mail flushed at the end names (see `CrawlWorkerOptions.cli`). */
  readonly cli: string;
  /** A one-line progress report, about twice a second. */
  readonly progress?: (status: CrawlStatus, elapsedMs: number) => void;
  /** Start from scratch even if an unfinished crawl is in the namespace. @default false */
  readonly fresh?: boolean;
  /** Aborting stops the crawl early (Ctrl-C); the workers finish their jobs and it can be resumed. */
  readonly signal?: AbortSignal;
}

export interface CrawlSummary {
  readonly seeds: AddResult;
  readonly status: CrawlStatus;
  readonly elapsedMs: number;
  readonly resumed: boolean;
  readonly interrupted: boolean;
  readonly alert: string | undefined;
}

const POLL_MS = 500;
/** Poll period near the end (fewer URLs waiting than the fleet's concurrency): a few reads a second more for a crawl that may be about to end. */
const END_POLL_MS = 50;
const MAX_RESPAWNS = 5;
/** How long workers told about a Redis outage get to exit before they are killed (they abandon within about 10 s). */
const OUTAGE_STOP_MS = 15_000;
/**
 * How long `crawl` waits for an unreachable database before it gives up
 * (exit 1, nothing published): long enough for a server that is starting up.
 */
const DATABASE_WAIT_MS = 10_000;
/**
 * How long a PING may go unanswered, once a stop by signal has stopped the
 * workers, before `crawl` stops without Redis (a loaded machine answers well
 * within it; a stopped or hung Redis never does).
 */
const REDIS_ANSWER_MS = 2_000;

/**
 * The one-machine crawl: enqueue the seeds, run `workers` processes until the
 * frontier is drained, stop them gracefully, flush pending alerts.
 * A finished crawl in the namespace is cleared first; an unfinished one is
 * resumed (its seen-set keeps pages from being fetched twice).
 *
 * A Redis outage shorter than `config.redisOutageLimit` is waited out (said
 * once); a longer one stops the workers at once (their jobs in flight stay
 * active in Redis and run again on resume) and rejects with a RedisOutageError.
 *
 * Aborting `signal` stops the workers gracefully at once; once they are gone
 * (within the grace period, or killed 5 s after it), a Redis that does not
 * answer a PING within 2 s is not waited for: it rejects with a
 * CrawlStoppedWithoutRedisError instead of a summary.
 */
export async function runCrawl(options: RunCrawlOptions): Promise<CrawlSummary> {
  const { config, log } = options;
  // Before anything is cleared, published or enqueued: a sink or WARC
  // directory the workers cannot write would only make them die one by one.
  await checkOutputs(config, { log, databaseWaitMs: DATABASE_WAIT_MS });
  // Its identity goes into the crawl definition before any worker starts; a module that does not load stops here.
  const crawler = config.crawler === undefined ? undefined : await loadCrawler(config.crawler);
  // The coordinator only waits for the crawl to end: its connections ride out
  // a Redis restart instead of failing after one retry.
  const services = await openCrawlServices(config, options.redisUrl, { role: 'coordinator' });
  const deadLetters = createDeadLetterAdmin({ connection: { url: options.redisUrl, maxRetriesPerRequest: null }, namespace: config.namespace });
  const children = new Set<ChildProcess>();
  // Set before any teardown: a worker that exits while we stop is not respawned.
  let stopping = false;
  let lostRedis: RedisOutageError | undefined;
  let reportOutage: (error: RedisOutageError) => void = () => undefined;
  const outage = new Promise<never>((_, reject) => {
    reportOutage = reject;
  });
  outage.catch(() => undefined); // Observed through the race below; never an unhandled rejection.
  // A stop by signal that Redis does not let finish: the crawl's own steps
  // wait for Redis (however long --redis-outage-limit is), so the stop is
  // bounded here instead (see stopWithinGrace).
  let stoppedWithoutRedis: CrawlStoppedWithoutRedisError | undefined;
  let reportStuck: (error: CrawlStoppedWithoutRedisError) => void = () => undefined;
  const stuck = new Promise<never>((_, reject) => {
    reportStuck = reject;
  });
  stuck.catch(() => undefined);
  let settled = false;
  const stopWithinGrace = async (reason: string): Promise<void> => {
    // The crawl loop may be waiting on Redis and never get to stop them: told now.
    await stopChildren(children, 'interrupted', config.gracePeriod);
    // The workers are gone (within the grace period plus a margin, or killed); what is left needs Redis
    // for a moment: the final counts. Given as long as Redis answers, not a moment more once it does not.
    while (!settled) {
      if (!(await redisAnswersWithin(services.redis, REDIS_ANSWER_MS))) {
        if (settled) return;
        stoppedWithoutRedis = new CrawlStoppedWithoutRedisError(reason);
        reportStuck(stoppedWithoutRedis);
        return;
      }
      // Unref'd: a crawl that has settled exits at once, not when this timer is due.
      await new Promise((resolve) => setTimeout(resolve, REDIS_ANSWER_MS).unref());
    }
  };
  const onAbort = () => void stopWithinGrace(String(options.signal?.reason ?? 'interrupted'));
  if (options.signal?.aborted === true) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const watch = watchRedisOutage(services.redis, {
    // On a cluster: the masters of this crawl's slots are the ones that must answer.
    clusterProbeKeys: crawlSlotKeys(services),
    limitMs: config.redisOutageLimit,
    onLost: () => log(`lost the connection to Redis; waiting up to ${formatDuration(config.redisOutageLimit)} for it to come back (workers keep their jobs)`),
    onBack: (downMs) => log(`Redis is back after ${(downMs / 1000).toFixed(1)} s; the crawl goes on`),
    onOutage: (error) => {
      lostRedis = error;
      stopping = true;
      reportOutage(error);
    },
  });

  // Every step below may wait on Redis; an outage past the limit ends the race instead.
  const crawl = async (): Promise<CrawlSummary> => {
    const before = await readCrawlStatus(services, () => deadLetters.count());
    const hasState = (await services.redis.exists(frontierKeys(config.namespace).seen)) === 1;
    // A continuous crawl with nothing in flight is still a crawl: its schedule goes on.
    const resumed = hasState && (!before.done || isContinuous(config)) && options.fresh !== true;
    if (hasState && !resumed) await clearNamespace(services.redis, config.namespace);
    else if (resumed) log(`resuming the unfinished crawl in namespace "${config.namespace}" (${before.backlog + before.waiting + before.delayed + before.active} pages left)`);

    // Published before any worker starts: the workers adopt it instead of bringing their own.
    const { notice } = await publishCrawlDefinition(services, definitionAuthor('crawl'));
    if (notice) log(`warning: ${notice}`);
    await claimCrawler(services.redis, config.namespace, crawler?.identity);
    const seeding = new Seeding(services, { log, signal: options.signal, sitemaps: readSitemaps });
    const seeds = await seeding.addSeeds(options.seeds);
    for (const rejected of seeds.rejected) log(`seed ${rejected.index + 1} rejected (${rejected.reason}): ${rejected.message}`);

    const started = performance.now();
    let respawns = 0;
    const launch = (index: number) => {
      const child = options.spawnWorker(index);
      children.add(child);
      child.on('exit', (code, signal) => {
        children.delete(child);
        if (stopping || options.signal?.aborted === true) return;
        // A crashed worker's jobs come back through BullMQ's stalled check; keep the fleet size.
        log(`worker ${index} exited (${signal ?? code ?? 'unknown'})${respawns < MAX_RESPAWNS ? '; restarting it' : ''}`);
        if (respawns < MAX_RESPAWNS) {
          respawns += 1;
          launch(index);
        }
      });
    };
    for (let index = 0; index < config.workers; index += 1) launch(index);
    if (config.sitemaps) {
      // Read with the workers already running: the pages a sitemap lists are
      // crawled while the rest of it downloads. The crawl is not done
      // before every sitemap was read.
      const seeded = await seeding.addSitemaps();
      const due = seeded.dueAgain > 0 ? `, ${seeded.dueAgain} known due again (newer lastmod)` : '';
      log(`sitemaps: ${seeded.sitemaps.length} listed in robots.txt, ${seeded.listed} URLs, ${seeded.accepted} enqueued, ${seeded.outOfScope} out of scope, ${seeded.failed} failed${due}`);
    }

    let status = await readCrawlStatus(services, () => deadLetters.count());
    let idlePolls = 0;
    const fleetConcurrency = config.workers * config.concurrency;
    // Two idle polls in a row with the same seen count: a job that finished
    // between counts cannot hide work, in one shard (its MULTI sees the
    // links it admitted) or across shards (admitting them grew the count).
    while (idlePolls < 2 && options.signal?.aborted !== true) {
      const seenBefore = status.seen;
      // Once fewer URLs wait than the fleet runs at once, the crawl may end
      // within one fetch: polls come faster, so its end is noticed within
      // END_POLL_MS, not POLL_MS (the whole command's time is what users see).
      const ending = status.backlog + status.waiting + status.delayed <= fleetConcurrency;
      await new Promise((resolve) => setTimeout(resolve, ending ? END_POLL_MS : POLL_MS));
      status = await readCrawlStatus(services, () => deadLetters.count());
      options.progress?.(status, performance.now() - started);
      // A continuous crawl (a revisit policy) runs until it is stopped.
      const done = status.done && !isContinuous(config);
      idlePolls = done && (idlePolls === 0 || status.seen === seenBefore) ? idlePolls + 1 : done ? 1 : 0;
      if (children.size === 0 && respawns >= MAX_RESPAWNS) throw new Error('every worker process died; see the log above');
    }
    // Redis went away and came back just as the limit passed: the stop is under way already.
    if (lostRedis !== undefined) throw lostRedis;
    stopping = true;
    await stopChildren(children, options.signal?.aborted === true ? 'interrupted' : 'finished', config.gracePeriod);
    // Read again once the workers are gone: each flushes its page counts as it
    // stops (they are batched), and the last of them may land after the idle polls.
    status = await readCrawlStatus(services, () => deadLetters.count());
    const alert = await flushAlerts(config, options, log);
    return { seeds, status, elapsedMs: performance.now() - started, resumed, interrupted: options.signal?.aborted === true, alert };
  };

  try {
    return await Promise.race([crawl(), outage, stuck]);
  } finally {
    settled = true;
    options.signal?.removeEventListener('abort', onAbort);
    stopping = true;
    watch.stop();
    if (lostRedis === undefined && stoppedWithoutRedis === undefined) {
      await stopChildren(children, 'interrupted', config.gracePeriod);
      await deadLetters.close();
      await services.close();
    } else {
      // Redis is gone or not answering: the workers are told to stop at once, and nothing here waits for it.
      await stopChildren(children, 'redis-outage', config.gracePeriod);
      await settleWithin(2_000, [services.disconnect(), deadLetters.disconnect()]);
    }
  }
}

/**
 * `finished`: the crawl is done, workers are told so over IPC (no signal to
 * log) and finish gracefully; `interrupted`: SIGTERM, a graceful stop;
 * `redis-outage`: told over IPC to stop at once without Redis. Whoever is
 * still running after the grace period (or OUTAGE_STOP_MS) is killed.
 */
async function stopChildren(children: Set<ChildProcess>, how: 'finished' | 'interrupted' | 'redis-outage', graceMs: number): Promise<void> {
  const message = how === 'finished' ? CRAWL_FINISHED_MESSAGE : how === 'redis-outage' ? REDIS_OUTAGE_MESSAGE : undefined;
  const killAfterMs = how === 'redis-outage' ? OUTAGE_STOP_MS : graceMs + 5_000;
  const exits = [...children].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        if (message !== undefined && child.connected) child.send(message, (error) => error && child.kill('SIGTERM'));
        else child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), killAfterMs).unref();
      }),
  );
  await Promise.all(exits);
}

/** Sends a pending dead-letter digest now, so the crawl does not exit with an alert waiting. */
async function flushAlerts(config: CrawlqConfig, options: Pick<RunCrawlOptions, 'redisUrl' | 'cli'>, log: (line: string) => void): Promise<string | undefined> {
  const alerts = createAlerts({ connection: { url: options.redisUrl }, namespace: config.namespace, mail: alertMailConfig(config, options.cli), log });
  try {
    const result = await alerts.flush();
    if (result.sent) return result.outboxFile ? `alert written to ${result.outboxFile}` : 'alert e-mail sent';
    if (result.pendingInRedis) return `alert not sent (${result.error ?? 'SMTP unavailable'}); it stays queued in Redis and goes out with the next worker`;
    return undefined;
  } finally {
    await alerts.close();
  }
}
