import type { ChildProcess } from 'node:child_process';
import type { CrawlqConfig } from '@crawlq/config';
import { createAlerts, createDeadLetters } from '@crawlq/dead-letter';
import type { AddResult } from '@crawlq/frontier';
import { frontierKeys } from '@crawlq/frontier';
import { definitionAuthor, publishCrawlDefinition } from './crawl-definition.js';
import { openCrawlServices } from './crawl-services.js';
import type { Redis } from 'ioredis';
import { readCrawlStatus, type CrawlStatus } from './crawl-status.js';
import { alertMailConfig, CRAWL_FINISHED_MESSAGE } from './crawl-worker.js';
import { clearNamespace } from './namespace-state.js';
import { seedFromSitemaps, sitemapsFromRobots } from './sitemap-seeding.js';

export interface RunCrawlOptions {
  readonly config: CrawlqConfig;
  readonly redisUrl: string;
  readonly seeds: readonly string[];
  /** Starts worker process number `index` (the app knows how to launch itself). */
  readonly spawnWorker: (index: number) => ChildProcess;
  readonly log: (line: string) => void;
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
const MAX_RESPAWNS = 5;

/**
 * The one-machine crawl: enqueue the seeds, run `workers` processes until the
 * frontier is drained, stop them gracefully, flush pending alerts.
 * A finished crawl in the namespace is cleared first; an unfinished one is
 * resumed (its seen-set keeps pages from being fetched twice).
 */
export async function runCrawl(options: RunCrawlOptions): Promise<CrawlSummary> {
  const { config, log } = options;
  // The coordinator only waits for the crawl to end: its connections ride out
  // a Redis restart instead of failing after one retry (#10).
  const services = await openCrawlServices(config, options.redisUrl, { role: 'coordinator' });
  const deadLetters = createDeadLetters({ connection: { url: options.redisUrl, maxRetriesPerRequest: null }, namespace: config.namespace });
  const children = new Set<ChildProcess>();
  const stopOutageLog = logRedisOutages(services.redis, log);
  // Set before any teardown: a worker that exits while we stop is not respawned.
  let stopping = false;
  try {
    const before = await readCrawlStatus(services, () => deadLetters.count());
    const hasState = (await services.redis.exists(frontierKeys(config.namespace).seen)) === 1;
    const resumed = hasState && !before.done && options.fresh !== true;
    if (hasState && !resumed) await clearNamespace(services.redis, config.namespace);
    else if (resumed) log(`resuming the unfinished crawl in namespace "${config.namespace}" (${before.waiting + before.delayed + before.active} jobs left)`);

    // Published before any worker starts: the workers adopt it instead of bringing their own.
    const { notice } = await publishCrawlDefinition(services, definitionAuthor('crawl'));
    if (notice) log(`warning: ${notice}`);
    const seeds = await services.frontier.addSeeds(options.seeds);
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
      // crawled while the rest of it downloads (#10). The crawl is not done
      // before every sitemap was read.
      const sitemaps = await sitemapsFromRobots(services, options.seeds);
      const seeded = await seedFromSitemaps(services, sitemaps, { log, signal: options.signal });
      log(`sitemaps: ${sitemaps.length} listed in robots.txt, ${seeded.listed} URLs, ${seeded.accepted} enqueued, ${seeded.outOfScope} out of scope, ${seeded.failed} failed`);
    }

    let status = await readCrawlStatus(services, () => deadLetters.count());
    let idlePolls = 0;
    // Two idle polls in a row: a job that finished between counts cannot hide work.
    while (idlePolls < 2 && options.signal?.aborted !== true) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      status = await readCrawlStatus(services, () => deadLetters.count());
      options.progress?.(status, performance.now() - started);
      idlePolls = status.done ? idlePolls + 1 : 0;
      if (children.size === 0 && respawns >= MAX_RESPAWNS) throw new Error('every worker process died; see the log above');
    }
    stopping = true;
    await stopChildren(children, config.gracePeriod, options.signal?.aborted !== true);
    const alert = await flushAlerts(config, options.redisUrl, log);
    return { seeds, status, elapsedMs: performance.now() - started, resumed, interrupted: options.signal?.aborted === true, alert };
  } finally {
    stopping = true;
    await stopChildren(children, config.gracePeriod, false);
    stopOutageLog();
    await deadLetters.close();
    await services.close();
  }
}

/** Says when the coordinator loses Redis and when it is back, once per outage. */
function logRedisOutages(redis: Redis, log: (line: string) => void): () => void {
  let lostAt: number | undefined;
  const onClose = () => {
    if (lostAt !== undefined) return;
    lostAt = performance.now();
    log('lost the connection to Redis; waiting for it to come back (workers keep their jobs)');
  };
  const onReady = () => {
    if (lostAt === undefined) return;
    log(`Redis is back after ${((performance.now() - lostAt) / 1000).toFixed(1)} s; the crawl goes on`);
    lostAt = undefined;
  };
  redis.on('close', onClose).on('ready', onReady);
  return () => redis.off('close', onClose).off('ready', onReady);
}

async function stopChildren(children: Set<ChildProcess>, graceMs: number, finished: boolean): Promise<void> {
  const exits = [...children].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        // A worker with an IPC channel is told the crawl finished, so it does not log a signal.
        if (finished && child.connected) child.send(CRAWL_FINISHED_MESSAGE, (error) => error && child.kill('SIGTERM'));
        else child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), graceMs + 5_000).unref();
      }),
  );
  await Promise.all(exits);
}

/** Sends a pending dead-letter digest now, so the crawl does not exit with an alert waiting. */
async function flushAlerts(config: CrawlqConfig, redisUrl: string, log: (line: string) => void): Promise<string | undefined> {
  const alerts = createAlerts({ connection: { url: redisUrl }, namespace: config.namespace, mail: alertMailConfig(config), log });
  try {
    const result = await alerts.flush();
    if (result.sent) return result.outboxFile ? `alert written to ${result.outboxFile}` : 'alert e-mail sent';
    if (result.pendingInRedis) return `alert not sent (${result.error ?? 'SMTP unavailable'}); it stays queued in Redis and goes out with the next worker`;
    return undefined;
  } finally {
    await alerts.close();
  }
}
