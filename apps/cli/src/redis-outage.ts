import type { RedisHandle, RedisOutageError } from '@crawlq/redis';
import { EXIT } from './exit-codes.js';

/** Exit code of a `crawl` or `worker` that stopped because Redis stayed unreachable past --redis-outage-limit. */
export const REDIS_OUTAGE_EXIT_CODE = EXIT.redisOutage;

/**
 * The one line a process prints when it gives up on Redis: how long it was
 * gone, what stopped and what to do; for the private redis-server, where its
 * log is (it is most likely the one that died).
 */
export function redisOutageLine(error: RedisOutageError, stopped: string, handle: RedisHandle): string {
  const log = handle.logFile === undefined ? '' : ` The private redis-server's log: ${handle.logFile}`;
  return `crawlq: ${error.message}; ${stopped}${log}\n`;
}

/** Prints the line and ends the process: connections still retrying a Redis that is gone must not keep it alive. */
export function exitOnRedisOutage(line: string): never {
  process.stderr.write(line);
  process.exit(REDIS_OUTAGE_EXIT_CODE);
}
