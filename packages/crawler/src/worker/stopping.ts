// Stopping a worker (or `crawl`'s coordinator): the signals that begin it,
// teardown bounded in time, and whether Redis still answers, as a stop must
// not wait on a Redis that is gone.
import type { RedisClient } from '@crawlq/redis';

/**
 * Aborted by the first SIGTERM, SIGINT or SIGHUP, with the signal's name as
 * reason. SIGHUP (the terminal closed, an ssh session dropped) is a stop like
 * SIGTERM, not a silent death: a worker is not a daemon that reloads its
 * configuration. The listeners stay for the rest of the process (`on`, not
 * `once`): Ctrl-C under `crawl` delivers SIGINT and then the parent's
 * SIGTERM, and a second signal must not kill the graceful stop the first one
 * began (the worker then ends within `--grace-period`). Call it before the
 * worker starts, so a signal during start-up stops it gracefully once
 * started. Only the executables call it (the CLI's `worker`, `crawlq-worker`,
 * the bench's worker): the package's own code never listens for signals.
 */
export function stopOnSignals(): AbortSignal {
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    if (signal === 'SIGHUP') {
      // The terminal may be gone: a log line written to it fails (EIO, EPIPE), and must not crash the stop under way.
      process.stdout.on('error', () => undefined);
      process.stderr.on('error', () => undefined);
    }
    controller.abort(signal);
  };
  process.on('SIGTERM', stop).on('SIGINT', stop).on('SIGHUP', stop);
  return controller.signal;
}

/** Waits for `work` to settle, but no longer than `ms`: for teardown that must not wait on a Redis that is gone. */
export async function settleWithin(ms: number, work: readonly Promise<unknown>[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(work), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * Whether Redis answers a PING within `ms`. A stopped server (SIGSTOP, a
 * hung host) keeps the connection open and never replies: no 'close' event
 * says so, only a command that goes unanswered.
 */
export async function redisAnswersWithin(redis: RedisClient, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms).unref()));
  try {
    return await Promise.race([redis.ping().then(() => true, () => false), silent]);
  } finally {
    clearTimeout(timer);
  }
}
