import { joinCoordinator, runWorkerProcess, type WorkerProcessEnd } from '@crawlq/crawler';
import type { RedisHandle } from '@crawlq/redis';
import { RedisOutageError } from '@crawlq/redis';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { exitOnRedisOutage, REDIS_OUTAGE_EXIT_CODE, redisOutageLine } from '../redis-outage.js';
import { withRedis } from '../redis-session.js';
import { CLI } from '../review-command.js';

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('Run a long-lived worker; start any number, on any machines sharing one Redis');
  addConfigOptions(command, WORKER_OPTIONS).action(async (flags: Record<string, unknown>) => {
    // Under `crawl`: its word to start (a worker started ahead) and to stop, from the action's first moment.
    const coordinator = await joinCoordinator({ crawlerModule: () => configFrom(flags).crawler });
    const config = configFrom(flags);
    let handle: RedisHandle | undefined;
    let ended: WorkerProcessEnd | undefined;
    try {
      ended = await runWorkerProcess({
        config,
        cli: CLI,
        coordinator,
        // REDIS_URL, or the private redis-server under --state-dir.
        withRedis: (body) =>
          withRedis(config, (redisUrl, resolved) => {
            handle = resolved;
            return body(redisUrl);
          }),
      });
    } catch (error) {
      if (!(error instanceof RedisOutageError) || handle === undefined) throw error;
      exitOnRedisOutage(redisOutageLine(error, 'worker stopped. Start it again once Redis is back; the jobs it had in flight return to the queue.', handle));
    }
    if (ended === 'coordinator-lost-redis') process.exit(REDIS_OUTAGE_EXIT_CODE);
    // Stopped by a signal without Redis (it did not answer once the grace period was over):
    // connections still waiting for it must not keep the process alive.
    if (ended === 'without-redis') process.exit(0);
  });
}
