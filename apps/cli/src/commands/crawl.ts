import { formatDuration } from '@crawlq/config';
import { formatPrettyLine, lineLogger, resolveFormat } from '@crawlq/logging';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { processLogger } from '../process-logging.js';
import { exitOnRedisOutage, REDIS_OUTAGE_EXIT_CODE, redisOutageLine } from '../redis-outage.js';
import { EXIT } from '../exit-codes.js';
import { CLI } from '../review-command.js';
import { everySeedRejected, printSummary, summaryExitCode } from './summary.js';

/** What stops a crawl early, resumably (exit code 130): Ctrl-C, a supervisor's SIGTERM, a closed terminal. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** After SIGHUP the terminal may be gone: a write to it fails (EIO, EPIPE), and must not crash the stop under way. */
function ignoreLostTerminal(): void {
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
}

export function registerCrawl(program: Command): void {
  const command = program
    .command('crawl')
    .description('Crawl from the seeds on this machine until the frontier is drained')
    .argument('<seed-url...>', 'where to start')
    .option('--fresh', 'discard an unfinished crawl in the namespace instead of resuming it')
    .option('--json', 'print the summary as one JSON object on stdout');
  addConfigOptions(command, [...WORKER_OPTIONS, 'workers']).action(async (seeds: string[], flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const [{ RedisOutageError }, { progressWriter }, { withRedis }, { createWorkerLauncher }] = await Promise.all([
      import('@crawlq/redis'),
      import('../output.js'),
      import('../redis-session.js'),
      import('../worker-launcher.js'),
    ]);
    let outage: string | undefined;
    let stoppedWithoutRedis: string | undefined;
    const code = await withRedis(config, async (redisUrl, handle) => {
      // Every log line, this process's and its workers', goes through the
      // progress output: on a terminal it clears the progress line, writes the
      // log line and draws the progress again below it.
      const progress = await progressWriter((line) => logger.info(line), { total: config.maxPages });
      const logger = processLogger(config, 'crawl', { stream: progress.logStream });
      // Workers write to a pipe, so JSON lines; shown as this process shows its own.
      const pretty = resolveFormat(config.logFormat, progress.logStream) === 'pretty';
      const launcher = createWorkerLauncher(config, redisUrl, {
        stderrLine: (line) => progress.write(pretty ? formatPrettyLine(line, progress.color) : line),
      });
      const interrupted = new AbortController();
      // SIGHUP (the terminal closed, an ssh session dropped) stops the crawl like
      // SIGTERM: resumable, with the same exit code, never a silent death.
      const onSignal = (signal: NodeJS.Signals) => {
        if (signal === 'SIGHUP') ignoreLostTerminal();
        if (interrupted.signal.aborted) return;
        logger.warn(`${signal}: stopping the crawl; the workers finish their jobs within ${formatDuration(config.gracePeriod)} (run the same command again to resume)`);
        interrupted.abort(signal);
      };
      for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
      // The workers load their code while this process loads the crawl's.
      launcher.prespawn(config.workers);
      const loading = Promise.all([import('@crawlq/crawl-control'), import('@crawlq/crawler')]);
      try {
        const [{ describeResults }, { runCrawl }] = await loading;
        const summary = await runCrawl({
          config,
          redisUrl,
          seeds,
          spawnWorker: (index) => launcher.spawn(index),
          cli: CLI,
          log: lineLogger(logger),
          progress: (status, elapsedMs) => progress.update(status, elapsedMs),
          fresh: flags.fresh === true,
          signal: interrupted.signal,
        });
        progress.done();
        printSummary(summary, describeResults(config), { namespace: config.namespace, json: flags.json === true });
        if (everySeedRejected(summary)) logger.error('every seed was rejected (see above): nothing to crawl');
        return summaryExitCode(summary);
      } catch (error) {
        const [, { CrawlStoppedWithoutRedisError }] = await loading;
        if (error instanceof CrawlStoppedWithoutRedisError) {
          progress.clear();
          stoppedWithoutRedis = `crawlq: ${error.message}; crawl stopped without waiting for it. Run the same command again to resume (the jobs in flight go back to the queue once Redis is back).\n`;
          return EXIT.interrupted;
        }
        // Redis gone past --redis-outage-limit: one line with the resume hint, not a stack trace.
        if (!(error instanceof RedisOutageError)) throw error;
        progress.clear();
        outage = redisOutageLine(error, 'crawl stopped. Run the same command again to resume.', handle);
        return REDIS_OUTAGE_EXIT_CODE;
      } finally {
        for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
        launcher.dispose();
      }
    });
    if (outage !== undefined) exitOnRedisOutage(outage);
    if (stoppedWithoutRedis !== undefined) {
      // Connections still waiting for Redis must not keep the process alive.
      process.stderr.write(stoppedWithoutRedis);
      process.exit(EXIT.interrupted);
    }
    process.exitCode = code;
  });
}
