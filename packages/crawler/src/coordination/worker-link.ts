import { rmSync, writeSync } from 'node:fs';
import type { LogStream } from '@crawlq/logging';
import { preloadCrawler } from '../handlers/load-crawler.js';
import { decodeCoordinatorMessage, decodeCoordinatorStop, decodeWorkerLaunch, WORKER_START_MESSAGE, WORKER_WAITING_MESSAGE, type CoordinatorStop } from './protocol.js';

/**
 * The worker's side of the link to the `crawl` that spawned it (see
 * protocol.ts): made by {@link joinCoordinator}, used by `runWorkerProcess`.
 */
export interface CoordinatorLink {
  /** Where log lines go: stderr, then the terminal `crawl` handed over once `crawl` is gone (undefined: plain stderr). */
  readonly logStream: LogStream | undefined;
  /**
   * Starts listening for the word to stop (or the channel closing) for good:
   * aborted with CRAWL_FINISHED_MESSAGE, REDIS_OUTAGE_MESSAGE, or because the
   * coordinator is gone, after which the process exits for sure once
   * `graceMs` (and a margin) is over.
   */
  stopSignal(graceMs: number, log: (line: string) => void): AbortSignal;
}

/**
 * For a worker `crawl` started: listens for `crawl`'s stop messages from this
 * first moment; a worker started ahead loads its crawler module (named by
 * `crawlerModule`) while it waits, says it waits, and waits for the word to
 * start; if `crawl` is gone first, the process exits without having done
 * anything. Undefined when no coordinator started this process (no IPC channel).
 */
export async function joinCoordinator(options: { readonly crawlerModule: () => string | undefined }): Promise<CoordinatorLink | undefined> {
  if (process.channel === undefined) return undefined;
  const heard = listenForCoordinatorWord();
  if (decodeWorkerLaunch(process.env).awaitStart === true) {
    // The coordinator loads the module meanwhile too (a TypeScript crawler only
    // once it is compiled, which the coordinator does before it gives the word
    // to start). What fails here fails again, and is reported, once the worker starts.
    try {
      const crawler = options.crawlerModule();
      if (crawler !== undefined) preloadCrawler(crawler);
    } catch {
      // Reported by the caller's own reading of its configuration.
    }
    await awaitStartFromCoordinator();
  }
  const output = workerLogStream();
  return {
    logStream: output?.logStream,
    stopSignal: (graceMs, log) => stopFromCoordinator(graceMs, log, { onGone: () => output?.coordinatorGone(), heard }),
  };
}

/** Removes the config file `crawl` handed over, once `crawl` is gone and cannot. */
function removeHandoverFile(): void {
  const { handoverFile } = decodeWorkerLaunch(process.env);
  if (handoverFile !== undefined) rmSync(handoverFile, { force: true });
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
function stopFromCoordinator(graceMs: number, log: (line: string) => void, hooks: { readonly onGone: () => void; readonly heard: CoordinatorWord }): AbortSignal {
  const { onGone, heard } = hooks;
  process.channel?.unref(); // The channel alone must not keep a stopped worker alive.
  const controller = new AbortController();
  const onMessage = (message: unknown) => {
    const stop = decodeCoordinatorStop(message);
    if (stop === undefined) return;
    process.off('message', onMessage);
    controller.abort(stop);
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
  word(): CoordinatorStop | undefined;
  /** Stops listening. */
  stop(): void;
}

/**
 * Listens for `crawl`'s stop messages from the worker's first moment. A crawl
 * with nothing to do (every seed rejected) is over before its workers have
 * started, and its word, arriving with or right after the word to start, had
 * no listener yet: it was lost, and the worker ran on until `crawl` killed it
 * after the grace period, 35 s later by default.
 */
function listenForCoordinatorWord(): CoordinatorWord {
  let heard: CoordinatorStop | undefined;
  const onMessage = (message: unknown) => {
    heard ??= decodeCoordinatorStop(message);
  };
  process.on('message', onMessage);
  return { word: () => heard, stop: () => void process.off('message', onMessage) };
}

/**
 * A worker `crawl` started ahead waits here, its code loaded, for the word to
 * start. If `crawl` is gone first, it exits without having done anything.
 */
async function awaitStartFromCoordinator(): Promise<void> {
  await new Promise<void>((resolve) => {
    const onGone = () => {
      removeHandoverFile();
      process.exit(0);
    };
    const onMessage = (message: unknown) => {
      if (decodeCoordinatorMessage(message) !== WORKER_START_MESSAGE) return;
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
function workerLogStream(): { logStream: LogStream; coordinatorGone(): void } | undefined {
  const fd = decodeWorkerLaunch(process.env).directStderrFd;
  if (fd === undefined) return undefined;
  let direct = false;
  // A write into the dead relay pipe (EPIPE) must not crash a worker that is finishing its jobs.
  process.stderr.on('error', () => undefined);
  return {
    logStream: {
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
