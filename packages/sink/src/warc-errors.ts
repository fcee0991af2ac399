import { ConfigError } from '@crawlq/config';
import { messageOf } from './database-errors.js';

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
export class WarcWriteError extends Error {
  override readonly name = 'WarcWriteError';
  readonly retryable = false;
  readonly failureReason = 'warc';
  /** The file the page was to go to, closed at its last whole record. */
  readonly file: string;
  readonly code: string | undefined;
  constructor(file: string, cause: unknown) {
    super(`--warc: could not write to ${file} (${messageOf(cause)}); the file was closed at its last whole record`, { cause });
    this.file = file;
    this.code = (cause as { code?: unknown } | undefined)?.code === undefined ? undefined : String((cause as { code?: unknown }).code);
  }
}
