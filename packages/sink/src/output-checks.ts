import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '@crawlq/config';
import { DatabaseUnavailableError, OutputPathError } from './errors.js';
import type { SinkTarget } from './open-result-sink.js';
import { openPool } from './postgres-pool.js';

/**
 * Creates `dir` if need be and proves a file can be made in it (then removes
 * that file): what a WARC writer does first, done before anything is published.
 * @throws OutputPathError naming `option`
 */
export function checkWritableDirectory(dir: string, option: string): void {
  const path = resolve(dir);
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    throw new OutputPathError(option, { what: 'cannot create directory', path }, error);
  }
  const probe = join(path, `.crawlq-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    closeSync(openSync(probe, 'wx'));
  } catch (error) {
    throw new OutputPathError(option, { what: 'cannot write in directory', path }, error);
  }
  rmSync(probe, { force: true });
}

/**
 * Opens `file` for appending as the JSONL sink will (its directory created,
 * the file created if missing, nothing written), and closes it.
 * @throws OutputPathError naming `option`
 */
export function checkAppendableFile(file: string, option: string): void {
  const path = resolve(file);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw new OutputPathError(option, { what: 'cannot create directory', path: dirname(path) }, error);
  }
  try {
    closeSync(openSync(path, 'a'));
  } catch (error) {
    throw new OutputPathError(option, { what: 'cannot write', path }, error);
  }
}

export interface CheckResultTargetOptions {
  /** The option the target came from, for the error line (`--out`, `--database-url`). */
  readonly option: string;
  readonly log: (line: string) => void;
  /**
   * How long an unreachable database is waited for before DatabaseUnavailableError;
   * unset: as long as it takes (a worker waits for its database as for Redis).
   */
  readonly waitMs?: number;
}

/**
 * Proves the results target takes records before a command publishes or
 * enqueues anything: the JSONL file can be appended to; PostgreSQL answers,
 * accepts the credentials and has (or now has) the results table.
 * @throws OutputPathError, DatabaseConfigError (both exit 2), DatabaseUnavailableError
 */
export async function checkResultTarget(target: SinkTarget, options: CheckResultTargetOptions): Promise<void> {
  switch (target.kind) {
    case 'jsonl':
      checkAppendableFile(target.path, options.option);
      return;
    case 'postgres': {
      let pool;
      try {
        pool = await openPool({
          url: target.url,
          log: options.log,
          applicationName: `crawlq-check:${process.pid}`,
          ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
        });
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        throw new DatabaseUnavailableError(options.option, target.url, error instanceof Error && error.cause !== undefined ? error.cause : error);
      }
      await pool.end();
      return;
    }
  }
}
