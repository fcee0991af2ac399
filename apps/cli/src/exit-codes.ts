/**
 * Every exit code crawlq uses (docs/01-getting-started.md, "Exit codes"); a supervisor or script
 * tells outcomes apart by them, so commands take them from here.
 */
export const EXIT = {
  /** Finished: the command did what it was asked (a crawl drained its frontier). */
  ok: 0,
  /** An error: a service failed, or a crawl had nothing to do because every seed was rejected. */
  error: 1,
  /** Usage: an unknown command or option, a missing argument, a bad option value. */
  usage: 2,
  /** `crawl` or `worker` stopped because Redis stayed unreachable past --redis-outage-limit. */
  redisOutage: 3,
  /** `crawl` stopped early by Ctrl-C or SIGTERM; run the same command again to resume. */
  interrupted: 130,
} as const;
