import { lineLogger } from '@crawlq/logging';
import { RedisOutageError } from '@crawlq/redis';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { processLogger } from '../observability.js';
import { formatProgress, progressWriter } from '../output.js';
import { exitOnRedisOutage, REDIS_OUTAGE_EXIT_CODE, redisOutageLine } from '../redis-outage.js';
import { withRedis } from '../redis-session.js';
import { createWorkerLauncher } from '../worker-launcher.js';
import { CLI } from '../review-command.js';
import { everySeedRejected, printSummary, summaryExitCode } from './summary.js';

export function registerCrawl(program: Command): void {
  const command = program
    .command('crawl')
    .description('Crawl from the seeds on this machine until the frontier is drained')
    .argument('<seed-url...>', 'where to start')
    .option('--fresh', 'discard an unfinished crawl in the namespace instead of resuming it')
    .option('--json', 'print the summary as one JSON object on stdout');
  addConfigOptions(command, [...WORKER_OPTIONS, 'workers']).action(async (seeds: string[], flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    let outage: string | undefined;
    const code = await withRedis(config, async (redisUrl, handle) => {
      const progress = progressWriter((line) => logger.info(line));
      const logger = processLogger(config, 'crawl', { beforeLine: () => progress.clear() });
      const launcher = createWorkerLauncher(config, redisUrl, {
        stderrLine: (line) => {
          progress.clear();
          process.stderr.write(line);
        },
      });
      const interrupted = new AbortController();
      const onSignal = () => interrupted.abort();
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
      try {
        // The workers load their code while this process loads the crawl's.
        launcher.prespawn(config.workers);
        const [{ describeResults }, { runCrawl }] = await Promise.all([import('@crawlq/crawler'), import('@crawlq/crawler/fetching')]);
        const summary = await runCrawl({
          config,
          redisUrl,
          seeds,
          spawnWorker: (index) => launcher.spawn(index),
          cli: CLI,
          log: lineLogger(logger),
          progress: (status, elapsedMs) => progress.update(formatProgress(status, elapsedMs)),
          fresh: flags.fresh === true,
          signal: interrupted.signal,
        });
        progress.done();
        printSummary(summary, describeResults(config), { namespace: config.namespace, json: flags.json === true });
        if (everySeedRejected(summary)) logger.error('every seed was rejected (see above): nothing to crawl');
        return summaryExitCode(summary);
      } catch (error) {
        // Redis gone past --redis-outage-limit: one line with the resume hint, not a stack trace (#10).
        if (!(error instanceof RedisOutageError)) throw error;
        progress.clear();
        outage = redisOutageLine(error, 'crawl stopped. Run the same command again to resume.', handle);
        return REDIS_OUTAGE_EXIT_CODE;
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        launcher.dispose();
      }
    });
    if (outage !== undefined) exitOnRedisOutage(outage);
    process.exitCode = code;
  });
}
