import { CrawlqError } from '@crawlq/errors';

/** A configuration value is missing or malformed. Never retryable: fix the input. */
export class ConfigError extends CrawlqError {
  override readonly name: string = 'ConfigError';
  /** The option as a user typed it (flag, env var or file key). */
  readonly option: string;

  constructor(option: string, message: string, options?: ErrorOptions) {
    super(`${option}: ${message}`, { retryable: false, cause: options?.cause });
    this.option = option;
  }
}
