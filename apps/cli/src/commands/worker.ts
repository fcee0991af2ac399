import { runWorkerUntilSignalled } from '@crawlq/crawler';
import { lineLogger } from '@crawlq/logging';
import { startObservability } from '@crawlq/metrics';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { metricsPortOf, processLogger, workerName } from '../observability.js';
import { withRedis } from '../redis-session.js';

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('Run a long-lived worker; start any number, on any machines sharing one Redis');
  addConfigOptions(command, WORKER_OPTIONS).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const logger = processLogger(config, workerName());
    await withRedis(config, async (redisUrl) => {
      const metricsPort = metricsPortOf(config);
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
        await runWorkerUntilSignalled({ config, redisUrl, log: lineLogger(logger), telemetry: observability.telemetry });
      } finally {
        await observability.close();
      }
    });
  });
}
