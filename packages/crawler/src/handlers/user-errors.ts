// The errors of the crawler API (what a user's route throws, and a definition
// that cannot run): in a module of their own, which imports only the error
// base (@crawlq/errors, which imports nothing), so that importing the crawler
// API (`crawlq`) stays cheap. The package's other errors are in ../errors.ts.
import { CrawlqError } from '@crawlq/errors';

/** Marks the pair below whichever copy of crawlq the user's module imported them from. */
const RETRYABLE = Symbol.for('crawlq.retryable');

export interface HandlerErrorOptions extends ErrorOptions {
  /** The dead letter's reason, in kebab-case words (`out-of-stock`). @default 'handler' */
  readonly reason?: string;
}

/**
 * What a route or hook throws to say how its page fails: the one class behind
 * RetryableError and NonRetryableError, which differ only in `retryable`.
 */
abstract class ThrownByHandler extends CrawlqError {
  readonly [RETRYABLE]: boolean;
  readonly reason: string | undefined;
  constructor(message: string, options: HandlerErrorOptions, retryable: boolean) {
    super(message, { retryable, cause: options.cause });
    this[RETRYABLE] = retryable;
    this.reason = options.reason;
  }
}

/** Thrown by a route or hook: the page is tried again (a queue-level attempt, with backoff) while attempts are left. */
export class RetryableError extends ThrownByHandler {
  override readonly name: string = 'RetryableError';
  constructor(message: string, options: HandlerErrorOptions = {}) {
    super(message, options, true);
  }
}

/** Thrown by a route or hook: the page is dead-lettered at once, with this message (and `reason`), no retry. */
export class NonRetryableError extends ThrownByHandler {
  override readonly name: string = 'NonRetryableError';
  constructor(message: string, options: HandlerErrorOptions = {}) {
    super(message, options, false);
  }
}

/** True / false for the pair above (from any copy of crawlq); undefined for any other error. */
export function retryableByUser(error: unknown): boolean | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const mark = (error as Record<symbol, unknown>)[RETRYABLE];
  return typeof mark === 'boolean' ? mark : undefined;
}

/** A crawler definition that cannot run: no routes, or a default route without a handler. */
export class CrawlerDefinitionError extends CrawlqError {
  override readonly name = 'CrawlerDefinitionError';
  constructor(message: string) {
    super(message, { retryable: false });
  }
}
