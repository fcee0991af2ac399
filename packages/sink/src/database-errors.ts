import { ConfigError } from '@crawlq/config';
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
export class SinkWriteError extends Error {
  override readonly name = 'SinkWriteError';
  readonly url: string;
  constructor(url: string, cause: unknown) {
    super(`could not store the record of ${url}: ${messageOf(cause)}`, { cause });
    this.url = url;
  }
}

/** The sink closed before a record could be stored; its job was not completed, so it runs again. */
export class SinkClosedError extends Error {
  override readonly name = 'SinkClosedError';
  constructor() {
    super('the results sink closed before the record was stored');
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
