#!/usr/bin/env node
// crawlq-worker: the fleet worker, configured by environment variables and an
// optional CRAWLQ_CONFIG file (see the README's option table); REDIS_URL is required.
import { ConfigError, loadConfig } from '@crawlq/config';
import { runWorkerUntilSignalled } from '@crawlq/crawler';

try {
  const config = loadConfig({ env: process.env });
  if (config.redisUrl === undefined) throw new ConfigError('REDIS_URL', 'required: fleet workers share one Redis');
  await runWorkerUntilSignalled({
    config,
    redisUrl: config.redisUrl,
    log: (line) => process.stderr.write(`[crawlq-worker ${process.pid}] ${line}\n`),
  });
} catch (error) {
  process.stderr.write(`crawlq-worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
