import { hostname } from 'node:os';
import type { CrawlqConfig } from '@crawlq/config';
import { createLogger, lineLogger } from '@crawlq/logging';
import { startObservability } from '@crawlq/metrics';
import { decodeWorkerLaunch, REDIS_OUTAGE_MESSAGE } from '../coordination/protocol.js';
import type { CoordinatorLink } from '../coordination/worker-link.js';
import { runWorkerUntilStopped } from './crawl-worker.js';
import { stopOnSignals } from './stopping.js';

/** How long a worker stopped without Redis waits for its metrics and fleet reads to close: they may be waiting on a Redis that does not answer. */
const CLOSE_WITHOUT_REDIS_MS = 2_000;

export interface WorkerProcessOptions {
  readonly config: CrawlqConfig;
  /** How operators run crawlq here, for the commands that log lines and alert e-mails name (see `CrawlWorkerOptions.cli`). */
  readonly cli: string;
  /** Runs `body` with the Redis URL (the CLI may start a private redis-server); default: `config.redisUrl`, which must be set then. */
  readonly withRedis?: (<T>(body: (redisUrl: string) => Promise<T>) => Promise<T>) | undefined;
  /** The link to the `crawl` that spawned this process ({@link joinCoordinator}); undefined for a worker on its own. */
  readonly coordinator?: CoordinatorLink | undefined;
}

/**
 * How a worker process ended: `stopped` (a signal, or its coordinator's word);
 * `without-redis` (a stop that Redis did not let finish: exit now, connections
 * still waiting for it would keep the process alive); `coordinator-lost-redis`
 * (its coordinator gave up on Redis: exit with the outage exit code).
 */
export type WorkerProcessEnd = 'stopped' | 'without-redis' | 'coordinator-lost-redis';

/**
 * A whole worker process, for `crawlq worker` and `crawlq-worker` alike: its
 * logger (named `worker-N` under `crawl`, else by host), its metrics and
 * stats line, the worker itself until a signal (SIGTERM, SIGINT, SIGHUP) or
 * its coordinator stops it, and the closing of all of them. Redis gone past
 * `--redis-outage-limit` (on its own, not under `crawl`, whose coordinator
 * decides for all its workers) rejects with a `RedisOutageError`.
 */
export async function runWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcessEnd> {
  const { config, coordinator } = options;
  const launch = decodeWorkerLaunch(process.env);
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    worker: launch.index === undefined ? hostname() : `worker-${launch.index}`,
    namespace: config.namespace,
    ...(coordinator?.logStream ? { stream: coordinator.logStream } : {}),
  });
  const log = lineLogger(logger);
  const coordinatorStop = coordinator?.stopSignal(config.gracePeriod, (line) => log(line, 'warn'));
  const withRedis = options.withRedis ?? (<T>(body: (redisUrl: string) => Promise<T>) => body(requiredRedisUrl(config)));
  let withoutRedis = false;
  await withRedis(async (redisUrl) => {
    // Workers that `crawl` spawns share one --metrics-port: worker N listens on PORT+N (0 stays "any free port").
    const metricsPort = config.metricsPort === undefined || config.metricsPort === 0 ? config.metricsPort : config.metricsPort + (launch.index ?? 0);
    const observability = await startObservability({
      redisUrl,
      namespace: config.namespace,
      logger,
      role: 'worker',
      ...(metricsPort === undefined ? {} : { metricsPort }),
      metricsHost: config.metricsHost,
      statsIntervalMs: config.statsInterval,
    });
    try {
      // Whichever comes first: a signal, or (under `crawl`) the coordinator's word.
      const signals = stopOnSignals();
      const stop = coordinatorStop ? AbortSignal.any([signals, coordinatorStop]) : signals;
      // Under `crawl` the coordinator decides when Redis has been gone too long, for all its workers.
      const ended = await runWorkerUntilStopped({ config, redisUrl, log, cli: options.cli, telemetry: observability.telemetry, stopOnRedisOutage: coordinatorStop === undefined, stop });
      withoutRedis = ended === 'without-redis';
    } finally {
      // Its fleet reads may be waiting on a Redis that does not answer: not waited for then.
      const closing = observability.close();
      await (withoutRedis ? Promise.race([closing, new Promise((resolve) => setTimeout(resolve, CLOSE_WITHOUT_REDIS_MS).unref())]) : closing);
    }
  });
  if (coordinatorStop?.reason === REDIS_OUTAGE_MESSAGE) return 'coordinator-lost-redis';
  return withoutRedis ? 'without-redis' : 'stopped';
}

function requiredRedisUrl(config: CrawlqConfig): string {
  if (config.redisUrl === undefined) throw new TypeError('runWorkerProcess: config.redisUrl is required without a withRedis option');
  return config.redisUrl;
}
