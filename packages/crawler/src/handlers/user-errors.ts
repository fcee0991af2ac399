// The errors a user's route throws: in a module of their own, which imports
// nothing, so that importing the crawler API (`crawlq`) stays cheap.

/** Marks the pair below whichever copy of crawlq the user's module imported them from. */
const RETRYABLE = Symbol.for('crawlq.retryable');

export interface HandlerErrorOptions extends ErrorOptions {
  /** The dead letter's reason, in kebab-case words (`out-of-stock`). @default 'handler' */
  readonly reason?: string;
}

/** Thrown by a route or hook: the page is tried again (a queue-level attempt, with backoff) while attempts are left. */
export class RetryableError extends Error {
  override readonly name: string = 'RetryableError';
  readonly [RETRYABLE] = true;
  readonly reason: string | undefined;
  constructor(message: string, options: HandlerErrorOptions = {}) {
    super(message, options);
    this.reason = options.reason;
  }
}

/** Thrown by a route or hook: the page is dead-lettered at once, with this message (and `reason`), no retry. */
export class NonRetryableError extends Error {
  override readonly name: string = 'NonRetryableError';
  readonly [RETRYABLE] = false;
  readonly reason: string | undefined;
  constructor(message: string, options: HandlerErrorOptions = {}) {
    super(message, options);
    this.reason = options.reason;
  }
}

/** True / false for the pair above (from any copy of crawlq); undefined for any other error. */
export function retryableByUser(error: unknown): boolean | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const mark = (error as Record<symbol, unknown>)[RETRYABLE];
  return typeof mark === 'boolean' ? mark : undefined;
}

