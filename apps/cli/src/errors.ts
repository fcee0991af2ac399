import { CrawlqError } from '@crawlq/errors';

/**
 * A command line crawlq refuses before running anything (exit 2). Not
 * @crawlq/config's ConfigError: loading that package (zod, the public-suffix
 * list) is most of what `crawlq --help` would otherwise cost. Its base comes
 * from @crawlq/errors, which imports nothing.
 */
export class UsageError extends CrawlqError {
  override readonly name = 'UsageError';

  constructor(option: string, message: string) {
    super(`${option}: ${message}`, { retryable: false });
  }
}
