import { ConfigError } from '@crawlq/config';
import { CrawlqError } from '@crawlq/errors';
import { redactConnectionUrl, redactText } from '@crawlq/urls';

/**
 * The database refused us for a reason waiting will not fix: wrong password,
 * unknown role or database. A configuration error (exit 2), never retried.
 */
export class DatabaseConfigError extends ConfigError {
  constructor(url: string, cause: unknown) {
    super('--database-url', `PostgreSQL at ${redactConnectionUrl(url)} refused the connection: ${redactText(messageOf(cause), url)}`, { cause });
  }
}

/** A record the database would not take (not a connection problem); the job fails and is retried or dead-lettered. */
export class SinkWriteError extends CrawlqError {
  override readonly name = 'SinkWriteError';
  readonly url: string;
  constructor(url: string, cause: unknown) {
    // The job's next attempt may store it (retried, or dead-lettered when attempts run out).
    super(`could not store the record of ${url}: ${messageOf(cause)}`, { retryable: true, cause });
    this.url = url;
  }
}

/** The sink closed before a record could be stored; its job was not completed, so it runs again. */
export class SinkClosedError extends CrawlqError {
  override readonly name = 'SinkClosedError';
  constructor() {
    super('the results sink closed before the record was stored', { retryable: true });
  }
}

/** SQLSTATE classes that mean "refused, fix the configuration". */
const CONFIG_STATES = new Set(['28000', '28P01', '3D000', '42501']);

export function isDatabaseConfigError(error: unknown): boolean {
  return CONFIG_STATES.has(sqlState(error) ?? '');
}

/**
 * Worth retrying: no SQLSTATE at all (socket refused, reset, timed out, the
 * connection ended), connection exceptions (08), insufficient resources (53),
 * operator intervention such as a shutdown or a server starting up (57),
 * serialization failures and deadlocks (40).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const state = sqlState(error);
  if (state === undefined) return true;
  return /^(08|53|57|40)/.test(state) || state === '55006' || state === '58000';
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}

/** The `--warc` directory cannot be created or used: fix the option or the file system (exit 2). */
export class WarcDirectoryError extends ConfigError {
  override readonly name = 'WarcDirectoryError';
  readonly dir: string;
  constructor(dir: string, cause: unknown) {
    super('--warc', `cannot use ${dir} as the WARC directory: ${messageOf(cause)}`, { cause });
    this.dir = dir;
  }
}

/**
 * A page's records could not be written to its WARC file (a full disk, a
 * quota, a read-only or vanished directory). The file was cut back to its
 * last whole record and closed, so every location handed out still resolves.
 *
 * Not retryable: none of these heals in the seconds before BullMQ's next
 * attempt, and each attempt fetches the page from its site again only to
 * fail the same way. The job fails at once with reason `warc`; its dead
 * letter keeps the URL for `dlq retry` once the disk has room again.
 */
export class WarcWriteError extends CrawlqError {
  override readonly name = 'WarcWriteError';
  declare readonly failureReason: 'warc';
  /** The file the page was to go to, closed at its last whole record. */
  readonly file: string;
  readonly code: string | undefined;
  constructor(file: string, cause: unknown) {
    super(`--warc: could not write to ${file} (${messageOf(cause)}); the file was closed at its last whole record`, { retryable: false, failureReason: 'warc', cause });
    this.file = file;
    this.code = (cause as { code?: unknown } | undefined)?.code === undefined ? undefined : String((cause as { code?: unknown }).code);
  }
}

/**
 * A path an option names cannot be created or written (a regular file where a
 * directory must be, no permission, a read-only filesystem). An input error
 * (exit 2): waiting will not fix it.
 */
export class OutputPathError extends ConfigError {
  override readonly name = 'OutputPathError';
  /** The absolute path that was refused. */
  readonly path: string;

  /** `refused.what`: what could not be done to `refused.path`, e.g. "cannot create directory". */
  constructor(option: string, refused: { readonly what: string; readonly path: string }, cause: unknown) {
    super(option, `${refused.what} ${refused.path} (${systemReason(cause)})`, { cause });
    this.path = refused.path;
  }
}

/**
 * The database did not answer within the time a command gives it at start: a
 * service failure (exit 1), not an input error; run again once it is up.
 */
export class DatabaseUnavailableError extends CrawlqError {
  override readonly name = 'DatabaseUnavailableError';
  readonly option: string;

  constructor(option: string, url: string, cause: unknown) {
    // A service failure: running again once the database is up may succeed.
    super(`${option}: PostgreSQL at ${redactConnectionUrl(url)} is unavailable (${redactText(messageOf(cause), url)})`, { retryable: true, cause });
    this.option = option;
  }
}

/** `ENOTDIR: not a directory` out of Node's `ENOTDIR: not a directory, mkdir '/x/y'`: the path is said once, by the caller. */
function systemReason(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = messageOf(error);
  if (typeof code === 'string' && message.startsWith(`${code}: `)) return message.split(', ')[0] ?? message;
  return message;
}
