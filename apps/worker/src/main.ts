#!/usr/bin/env node
// crawlq-worker: the fleet worker, configured by environment variables and an
// optional CRAWLQ_CONFIG file (see the option table in docs/03-configuration.md); REDIS_URL is required.
import { ConfigError, loadConfig } from '@crawlq/config';
import { runWorkerProcess } from '@crawlq/crawler';
import { RedisOutageError } from '@crawlq/redis';
import { redactWrites } from '@crawlq/urls';

// Whatever reaches stderr (errors, log lines) shows no credentials.
redactWrites(process.stderr);

try {
  const config = loadConfig({ env: process.env });
  if (config.redisUrl === undefined) throw new ConfigError('REDIS_URL', 'required: fleet workers share one Redis');
  // A fleet worker runs built JavaScript (systemd, containers): its operators use the installed CLI.
  // SIGTERM (systemd, a container stop), SIGINT or SIGHUP: a graceful stop within CRAWLQ_GRACE_PERIOD.
  const ended = await runWorkerProcess({ config, cli: 'crawlq' });
  // Stopped without Redis: connections still waiting for it must not keep the process alive.
  if (ended === 'without-redis') process.exit(0);
} catch (error) {
  if (error instanceof RedisOutageError) {
    // Redis gone past CRAWLQ_REDIS_OUTAGE_LIMIT: one line and exit code 3, for the supervisor to restart it later.
    process.stderr.write(`crawlq-worker: ${error.message}; worker stopped. Start it again once Redis is back; the jobs it had in flight return to the queue.\n`);
    process.exit(3);
  }
  process.stderr.write(`crawlq-worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
