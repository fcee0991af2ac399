import { ConfigError } from '@crawlq/config';
import { CrawlqError } from '@crawlq/errors';
import { redactConnectionUrl, redactText } from '@crawlq/urls';

/** `redis-server` is not installed and no REDIS_URL was given. */
export class RedisNotInstalledError extends CrawlqError {
  override readonly name = 'RedisNotInstalledError';
  constructor() {
    super(
      [
        'redis-server was not found on PATH, and REDIS_URL is not set.',
        'Either install Redis:  sudo apt-get install -y redis-server   (Debian/Ubuntu)',
        '                       brew install redis                    (macOS)',
        'or point crawlq at one: export REDIS_URL=redis://host:6379',
      ].join('\n'),
      // Nothing heals until someone installs Redis or names one.
      { retryable: false },
    );
  }
}

/** Redis could not be reached. Retryable by the operator, not by a job. */
export class RedisUnavailableError extends CrawlqError {
  override readonly name = 'RedisUnavailableError';
  readonly url: string;
  constructor(url: string, options?: ErrorOptions) {
    super(`cannot reach Redis at ${redactConnectionUrl(url)}: ${redactText((options?.cause as Error | undefined)?.message ?? 'no answer', url)}`, {
      retryable: true,
      cause: options?.cause,
    });
    this.url = redactConnectionUrl(url);
  }
}

/**
 * Redis stayed unreachable longer than the process may wait for it
 * (`--redis-outage-limit`). Nothing inside the process can fix that, so no job
 * retries it: the process stops (exit code 3), and running it again once Redis
 * is back resumes the crawl.
 */
export class RedisOutageError extends CrawlqError {
  override readonly name = 'RedisOutageError';
  /** How long the connection had been down when the process gave up. */
  readonly downMs: number;
  readonly limitMs: number;
  constructor(downMs: number, limitMs: number, options?: ErrorOptions) {
    // Not retryable within the process: it stops, and a new run resumes.
    super(`Redis unreachable for ${(downMs / 1000).toFixed(1)} s (limit ${formatLimit(limitMs)})`, { retryable: false, cause: options?.cause });
    this.downMs = downMs;
    this.limitMs = limitMs;
  }
}

/**
 * The Redis URL names a database the server does not have (`/99` on a server
 * with `databases 16`). An input error like a bad option: exit 2, not retried.
 */
export class RedisDatabaseError extends ConfigError {
  override readonly name = 'RedisDatabaseError';
  /** The server, without credentials or path. */
  readonly server: string;
  readonly database: number;
  /** The server's `databases` setting, when CONFIG GET may be used. */
  readonly databases: number | undefined;
  /** The server is a Redis Cluster node: it has database 0 only. */
  readonly cluster: boolean;

  constructor(
    url: string,
    found: { readonly database: number; readonly databases: number | undefined; readonly cluster?: boolean },
    options?: ErrorOptions,
  ) {
    const { database, databases } = found;
    const server = serverOf(url);
    const why = found.cluster === true
      ? `is a Redis Cluster node, and a cluster has only database 0: drop the database ${database} from the URL`
      : databases !== undefined && database >= databases
        ? `has no database ${database} (it has ${databases}; databases setting)`
        : `refused database ${database} (${(options?.cause as Error | undefined)?.message ?? 'SELECT failed'})`;
    super('redisUrl', why, options);
    // The sentence names the server itself; no option prefix (the URL may come from a flag or REDIS_URL).
    this.message = `Redis at ${server} ${why}`;
    this.server = server;
    this.database = database;
    this.databases = databases;
    this.cluster = found.cluster === true;
  }
}

/** `4 s`, `4.5 s`, `5 min`: how a limit was given, roughly. */
function formatLimit(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/** `redis://host:port`: no credentials, no database, no query. */
function serverOf(url: string): string {
  try {
    const parsed = new URL(redactConnectionUrl(url));
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return redactConnectionUrl(url);
  }
}
