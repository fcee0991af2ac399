import { runWorkerUntilSignalled } from '@crawlq/crawler';
import { rmSync } from 'node:fs';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { withRedis } from '../redis-session.js';
import { HANDOVER_FILE_ENV } from '../worker-launcher.js';

/**
 * A worker started by `crawl` has an IPC channel to it. When the channel
 * closes (`crawl` exited, even by SIGKILL) the worker stops gracefully, removes
 * the config file `crawl` handed over, and exits for sure once the grace
 * period is over: it never outlives its coordinator (#10).
 */
function stopWhenParentGone(graceMs: number, log: (line: string) => void): AbortSignal | undefined {
  if (process.channel === undefined) return undefined;
  process.channel.unref(); // The channel alone must not keep a stopped worker alive.
  const controller = new AbortController();
  process.once('disconnect', () => {
    const handover = process.env[HANDOVER_FILE_ENV];
    if (handover !== undefined) rmSync(handover, { force: true });
    // Redis may be gone with the coordinator; then closing could wait forever.
    setTimeout(() => {
      log('coordinator gone and the graceful stop did not finish; exiting');
      process.exit(1);
    }, graceMs + 10_000).unref();
    controller.abort('the crawl coordinator is gone');
  });
  return controller.signal;
}

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('Run a long-lived worker; start any number, on any machines sharing one Redis');
  addConfigOptions(command, WORKER_OPTIONS).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const log = (line: string) => process.stderr.write(`[worker ${process.pid}] ${line}\n`);
    const stop = stopWhenParentGone(config.gracePeriod, log);
    await withRedis(config, (redisUrl) => runWorkerUntilSignalled({ config, redisUrl, log, stop }));
  });
}
