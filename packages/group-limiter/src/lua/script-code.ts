/** First element of every limiter script reply; the Lua sources interpolate these values. */
export enum ScriptCode {
  /** The policy version passed as ARGV differs from the stored one; element 2 is the stored version. */
  StalePolicy = 0,
  /** Success (acquire: admitted; element 2 = startInMs). */
  Ok = 1,
  /** Denied: pacing (GCRA) does not allow a start soon enough. */
  DeniedRate = 2,
  /** Denied: every concurrency slot is leased. */
  DeniedConcurrency = 3,
  /** Denied: the group is paused. */
  DeniedPaused = 4,
  /** setPolicy: the stored policy was already identical. */
  Unchanged = 5,
  /** Denied: the crawl-wide cap (`globalRate`) does not allow a start soon enough. */
  DeniedGlobalRate = 6,
  /** Denied: the server's rate (the address behind the group) does not allow a start soon enough. */
  DeniedServerRate = 7,
  /** Denied: every concurrency slot of the server is leased. */
  DeniedServerConcurrency = 8,
}
