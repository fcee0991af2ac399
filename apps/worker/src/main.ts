#!/usr/bin/env node
// crawlq-worker: the fleet worker, configured by environment variables and an
// optional CRAWLQ_CONFIG file (see the option table in docs/03-configuration.md); REDIS_URL is required.
import { hostname } from 'node:os';
import { ConfigError, loadConfig } from '@crawlq/config';
import { runWorkerUntilStopped, stopOnSignals } from '@crawlq/crawler/fetching';
import { createLogger, lineLogger } from '@crawlq/logging';
import { startObservability } from '@crawlq/metrics';
import { RedisOutageError } from '@crawlq/redis';
import { redactWrites } from '@crawlq/urls';

// Whatever reaches stderr (errors, log lines) shows no credentials.
redactWrites(process.stderr);

try {
  const config = loadConfig({ env: process.env });
  if (config.redisUrl === undefined) throw new ConfigError('REDIS_URL', 'required: fleet workers share one Redis');
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, worker: hostname(), namespace: config.namespace });
  const observability = await startObservability({
    redisUrl: config.redisUrl,
    namespace: config.namespace,
    logger,
    role: 'worker',
    ...(config.metricsPort === undefined ? {} : { metricsPort: config.metricsPort }),
    metricsHost: config.metricsHost,
    statsIntervalMs: config.statsInterval,
  });
  let withoutRedis = false;
  try {
    // A fleet worker runs built JavaScript (systemd, containers): its operators use the installed CLI.
    const cli = 'crawlq';
    // SIGTERM (systemd, a container stop), SIGINT or SIGHUP: a graceful stop within CRAWLQ_GRACE_PERIOD.
    const ended = await runWorkerUntilStopped({ config, redisUrl: config.redisUrl, cli, log: lineLogger(logger), telemetry: observability.telemetry, stop: stopOnSignals() });
    withoutRedis = ended === 'without-redis';
  } finally {
    // Its fleet reads may be waiting on a Redis that does not answer: not waited for then.
    const closing = observability.close();
    await (withoutRedis ? Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]) : closing);
  }
  // Stopped without Redis: connections still waiting for it must not keep the process alive.
  if (withoutRedis) process.exit(0);
} catch (error) {
  if (error instanceof RedisOutageError) {
    // Redis gone past CRAWLQ_REDIS_OUTAGE_LIMIT: one line and exit code 3, for the supervisor to restart it later.
    process.stderr.write(`crawlq-worker: ${error.message}; worker stopped. Start it again once Redis is back; the jobs it had in flight return to the queue.\n`);
    process.exit(3);
  }
  process.stderr.write(`crawlq-worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
