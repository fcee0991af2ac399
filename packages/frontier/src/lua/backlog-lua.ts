
/**
 * How far apart one priority step puts buckets: more than any depth, so a
 * higher priority always goes first, whatever the depths.
 */
export const BACKLOG_PRIORITY_STEP = 1_000_000;
/** Priorities `enqueue` accepts: integers from -1,000 to 1,000 (default 0); scores stay exact in a double. */
export const MAX_BACKLOG_PRIORITY = 1_000;

