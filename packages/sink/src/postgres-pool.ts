import { redactConnectionUrl, redactText } from '@crawlq/urls';
import type pg from 'pg';
import { DatabaseConfigError, isDatabaseConfigError, isTransientDatabaseError, messageOf } from './errors.js';
import { migrate } from './postgres-schema.js';

export interface OpenPoolOptions {
  readonly url: string;
  readonly log: (line: string) => void;
  /** Names the connections in pg_stat_activity. */
  readonly applicationName: string;
  /** Stop waiting for an unreachable database (the process is shutting down). */
  readonly signal?: AbortSignal;
  /** Give up waiting after this long; default: wait as long as it takes (a worker). */
  readonly waitMs?: number;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * A small pool with the schema in place. An unreachable database is waited
 * for (with a message, as a worker waits for Redis); a refusal that waiting
 * cannot fix (password, unknown database) throws DatabaseConfigError.
 */
export async function openPool(options: OpenPoolOptions): Promise<pg.Pool> {
  const { url, log } = options;
  // Loaded here, not with the package: most processes (a JSONL worker, enqueue) never open a database.
  const { default: postgres } = await import('pg');
  const pool = new postgres.Pool({
    connectionString: url,
    max: 2,
    connectionTimeoutMillis: 10_000,
    // A hung server must not hold a batch forever; the upsert makes a retry after a timeout safe.
    query_timeout: 60_000,
    application_name: options.applicationName,
  });
  // An idle client whose server went away emits here; without a listener the process would crash.
  pool.on('error', (error) => log(`PostgreSQL connection lost: ${redactText(messageOf(error), url)}`));
  const deadline = options.waitMs === undefined ? Infinity : Date.now() + options.waitMs;
  await retryWhileTransient(() => migrate(pool), {
    url,
    log,
    deadline,
    ...(options.signal ? { signal: options.signal } : {}),
    onGiveUp: () => pool.end().catch(() => undefined),
  });
  return pool;
}

interface RetryOptions {
  readonly url: string;
  readonly log: (line: string) => void;
  readonly deadline: number;
  readonly signal?: AbortSignal;
  readonly onGiveUp?: () => Promise<unknown>;
}

async function retryWhileTransient(action: () => Promise<void>, options: RetryOptions): Promise<void> {
  const { url, log } = options;
  let delay = RETRY_MIN_MS;
  let said = '';
  for (;;) {
    try {
      await action();
      if (said !== '') log(`PostgreSQL at ${redactConnectionUrl(url)} is reachable`);
      return;
    } catch (error) {
      if (isDatabaseConfigError(error)) {
        await options.onGiveUp?.();
        throw new DatabaseConfigError(url, error);
      }
      const reason = redactText(messageOf(error), url);
      if (!isTransientDatabaseError(error) || Date.now() + delay > options.deadline || options.signal?.aborted === true) {
        await options.onGiveUp?.();
        throw new Error(`PostgreSQL at ${redactConnectionUrl(url)}: ${reason}`, { cause: error });
      }
      if (reason !== said) log(`waiting for PostgreSQL at ${redactConnectionUrl(url)} (${reason}); retrying`);
      said = reason;
      await sleep(delay, options.signal);
      delay = Math.min(RETRY_MAX_MS, delay * 2);
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
