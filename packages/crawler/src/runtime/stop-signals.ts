/**
 * Aborted by the first SIGTERM or SIGINT, with the signal's name as reason.
 * The listeners stay for the rest of the process (`on`, not `once`): Ctrl-C
 * under `crawl` delivers SIGINT and then the parent's SIGTERM, and a second
 * signal must not kill the graceful stop the first one began (the worker then
 * ends within `--grace-period`). Call it before the worker starts, so a
 * signal during start-up stops it gracefully once started. Only the
 * executables call it (the CLI's `worker`, `crawlq-worker`, the bench's
 * worker): the package's own code never listens for signals.
 */
export function stopOnSignals(): AbortSignal {
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => controller.abort(signal);
  process.on('SIGTERM', stop).on('SIGINT', stop);
  return controller.signal;
}
