import { rmSync, writeSync } from 'node:fs';
import { CRAWL_FINISHED_MESSAGE, preloadCrawler, REDIS_OUTAGE_MESSAGE, runWorkerUntilStopped, stopOnSignals } from '@crawlq/crawler/fetching';
import { lineLogger, type LogStream } from '@crawlq/logging';
import { startObservability } from '@crawlq/metrics';
import { RedisOutageError } from '@crawlq/redis';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { metricsPortOf, processLogger, workerName } from '../process-logging.js';
import { exitOnRedisOutage, REDIS_OUTAGE_EXIT_CODE, redisOutageLine } from '../redis-outage.js';
import { withRedis } from '../redis-session.js';
import { AWAIT_START_ENV, DIRECT_STDERR_FD_ENV, HANDOVER_FILE_ENV, WORKER_START_MESSAGE, WORKER_WAITING_MESSAGE } from '../worker-launcher.js';
import { CLI } from '../review-command.js';

/** Removes the config file `crawl` handed over, once `crawl` is gone and cannot. */
function removeHandoverFile(): void {
  const handover = process.env[HANDOVER_FILE_ENV];
  if (handover !== undefined) rmSync(handover, { force: true });
}

/**
 * A worker started by `crawl` has an IPC channel to it, the one way `crawl`
 * stops it. A CRAWL_FINISHED_MESSAGE on it is a normal end: the worker stops
 * gracefully without reporting a signal. A REDIS_OUTAGE_MESSAGE means `crawl`
 * gave up on Redis: the worker stops at once, silently (`crawl` says why),
 * and exits with code 3. When the channel closes instead
 * (`crawl` exited, even by SIGKILL) the worker stops gracefully too, removes
 * the config file `crawl` handed over, and exits for sure once the grace
 * period is over: it never outlives its coordinator.
 */
function stopFromCoordinator(graceMs: number, log: (line: string) => void, hooks: { readonly onGone: () => void; readonly heard: CoordinatorWord }): AbortSignal | undefined {
  const { onGone, heard } = hooks;
  if (process.channel === undefined) return undefined;
  process.channel.unref(); // The channel alone must not keep a stopped worker alive.
  const controller = new AbortController();
  const onMessage = (message: unknown) => {
    if (message !== CRAWL_FINISHED_MESSAGE && message !== REDIS_OUTAGE_MESSAGE) return;
    process.off('message', onMessage);
    controller.abort(message);
  };
  process.on('message', onMessage);
  process.once('disconnect', () => {
    process.off('message', onMessage);
    if (controller.signal.aborted) return; // Told the crawl finished or lost Redis: already stopping.
    onGone();
    removeHandoverFile();
    // Redis may be gone with the coordinator; then closing could wait forever.
    setTimeout(() => {
      log('coordinator gone and the graceful stop did not finish; exiting');
      process.exit(1);
    }, graceMs + 10_000).unref();
    controller.abort('the crawl coordinator is gone');
  });
  heard.stop();
  const early = heard.word();
  if (early !== undefined) onMessage(early);
  return controller.signal;
}

interface CoordinatorWord {
  /** The stop message `crawl` sent before {@link stopFromCoordinator} listened, if any. */
  word(): string | undefined;
  /** Stops listening. */
  stop(): void;
}

/**
 * Listens for `crawl`'s stop messages from the action's first moment. A crawl
 * with nothing to do (every seed rejected) is over before its workers have
 * started, and its word, arriving with or right after the word to start, had
 * no listener yet: it was lost, and the worker ran on until `crawl` killed it
 * after the grace period, 35 s later by default.
 */
function listenForCoordinatorWord(): CoordinatorWord {
  let heard: string | undefined;
  const onMessage = (message: unknown) => {
    if (message === CRAWL_FINISHED_MESSAGE || message === REDIS_OUTAGE_MESSAGE) heard ??= message;
  };
  if (process.channel !== undefined) process.on('message', onMessage);
  return { word: () => heard, stop: () => void process.off('message', onMessage) };
}

/**
 * A worker `crawl` started ahead waits here, its code loaded, for the word to
 * start. If `crawl` is gone first, it exits without having done anything.
 */
async function awaitStartFromCoordinator(): Promise<void> {
  if (process.env[AWAIT_START_ENV] !== '1' || process.channel === undefined) return;
  await new Promise<void>((resolve) => {
    const onGone = () => {
      removeHandoverFile();
      process.exit(0);
    };
    const onMessage = (message: unknown) => {
      if (message !== WORKER_START_MESSAGE) return;
      process.off('message', onMessage).off('disconnect', onGone);
      resolve();
    };
    process.on('message', onMessage).once('disconnect', onGone);
    process.send?.(WORKER_WAITING_MESSAGE);
  });
}

/**
 * Where a worker's log lines go: stderr, except that under a `crawl` which
 * relays stderr, lines go straight to the terminal `crawl` handed over once
 * `crawl` is gone (nothing reads the relay pipe then).
 */
function workerLogStream(): { stream: LogStream; coordinatorGone(): void } | undefined {
  const fd = Number(process.env[DIRECT_STDERR_FD_ENV]);
  if (!Number.isInteger(fd) || fd < 3) return undefined;
  let direct = false;
  // A write into the dead relay pipe (EPIPE) must not crash a worker that is finishing its jobs.
  process.stderr.on('error', () => undefined);
  return {
    stream: {
      write: (text: string) => {
        if (!direct) return process.stderr.write(text);
        try {
          writeSync(fd, text);
        } catch {
          // No terminal left either: the line is lost, the worker goes on stopping.
        }
        return true;
      },
      isTTY: process.stderr.isTTY,
    },
    coordinatorGone: () => (direct = true),
  };
}

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('Run a long-lived worker; start any number, on any machines sharing one Redis');
  addConfigOptions(command, WORKER_OPTIONS).action(async (flags: Record<string, unknown>) => {
    const heard = listenForCoordinatorWord();
    // A worker started ahead loads its crawler module while it waits (the
    // coordinator loads it meanwhile too; a TypeScript crawler only once it is
    // compiled, which the coordinator does before it gives the word to start).
    // What fails here fails again, and is reported, once the worker starts.
    if (process.env[AWAIT_START_ENV] === '1') {
      try {
        const early = configFrom(flags);
        if (early.crawler !== undefined) preloadCrawler(early.crawler);
      } catch {
        // Reported by the same configFrom below.
      }
    }
    await awaitStartFromCoordinator();
    const config = configFrom(flags);
    const output = workerLogStream();
    const logger = processLogger(config, workerName(), output ? { stream: output.stream } : {});
    const log = lineLogger(logger);
    const coordinator = stopFromCoordinator(config.gracePeriod, (line) => log(line, 'warn'), { onGone: () => output?.coordinatorGone(), heard });
    let outage: string | undefined;
    let withoutRedis = false;
    await withRedis(config, async (redisUrl, handle) => {
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
        // Whichever comes first: a signal, or (under `crawl`) the coordinator's word.
        const signals = stopOnSignals();
        const stop = coordinator ? AbortSignal.any([signals, coordinator]) : signals;
        // Under `crawl` the coordinator decides when Redis has been gone too long, for all its workers.
        const ended = await runWorkerUntilStopped({ config, redisUrl, log, cli: CLI, telemetry: observability.telemetry, stopOnRedisOutage: coordinator === undefined, stop });
        withoutRedis = ended === 'without-redis';
      } catch (error) {
        if (!(error instanceof RedisOutageError)) throw error;
        outage = redisOutageLine(error, 'worker stopped. Start it again once Redis is back; the jobs it had in flight return to the queue.', handle);
      } finally {
        // Its fleet reads may be waiting on a Redis that does not answer: not waited for then.
        const closing = observability.close();
        await (withoutRedis ? Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]) : closing);
      }
    });
    if (outage !== undefined) exitOnRedisOutage(outage);
    // Stopped by a signal without Redis (it did not answer once the grace period was over):
    // connections still waiting for it must not keep the process alive.
    if (withoutRedis && coordinator?.reason !== REDIS_OUTAGE_MESSAGE) process.exit(0);
    if (coordinator?.reason === REDIS_OUTAGE_MESSAGE) process.exit(REDIS_OUTAGE_EXIT_CODE);
  });
}
