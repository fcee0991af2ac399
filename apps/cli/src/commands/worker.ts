import { runWorkerUntilSignalled } from '@crawlq/crawler';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { withRedis } from '../redis-session.js';

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('Run a long-lived worker; start any number, on any machines sharing one Redis');
  addConfigOptions(command, WORKER_OPTIONS).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    await withRedis(config, (redisUrl) =>
      runWorkerUntilSignalled({ config, redisUrl, log: (line) => process.stderr.write(`[worker ${process.pid}] ${line}\n`) }),
    );
  });
}
