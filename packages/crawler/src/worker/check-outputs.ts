import { isPostgresUrl, type CrawlqConfig } from '@crawlq/config';
import { checkResultTarget, checkWritableDirectory } from '@crawlq/sink';
import { resultsTargetOf } from '@crawlq/crawl-control';

export interface CheckOutputsOptions {
  readonly log: (line: string) => void;
  /**
   * How long an unreachable database is waited for; unset: as long as it
   * takes (a standalone worker waits for its database as for Redis).
   */
  readonly databaseWaitMs?: number;
}

/**
 * Proves every place this process was told to write to takes writes: the
 * results sink (the JSONL file, or PostgreSQL reachable and accepting the
 * credentials) and the WARC directory. Run before a command publishes a crawl
 * definition or enqueues anything, so a typo costs nothing: a crawl that
 * cannot store its pages must not start, half-start, or leave seeds behind.
 * @throws ConfigError naming the option (exit 2), or DatabaseUnavailableError (exit 1)
 */
export async function checkOutputs(config: CrawlqConfig, options: CheckOutputsOptions): Promise<void> {
  const target = resultsTargetOf(config);
  const option = target.kind === 'postgres' && !isPostgresUrl(config.out) ? '--database-url' : '--out';
  await checkResultTarget(target, { option, log: options.log, ...(options.databaseWaitMs === undefined ? {} : { waitMs: options.databaseWaitMs }) });
  if (config.warc !== undefined) checkWritableDirectory(config.warc, '--warc');
}
