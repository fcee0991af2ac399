import { CrawlqError } from '@crawlq/errors';

/** Base class of every error thrown by the group limiter; `retryable` says whether trying again may help. */
export class GroupLimiterError extends CrawlqError {
  override readonly name: string = 'GroupLimiterError';
  /** The limiter operation that failed, e.g. `acquire`. */
  readonly operation: string;

  constructor(message: string, details: { operation: string; retryable: boolean; cause?: unknown }) {
    super(message, { retryable: details.retryable, cause: details.cause });
    this.operation = details.operation;
  }
}

/** A `LimitPolicy` that cannot be used; lists every problem found. Not retryable. */
export class InvalidLimitPolicyError extends GroupLimiterError {
  override readonly name = 'InvalidLimitPolicyError';
  /** One human-readable line per problem, each naming the offending field. */
  readonly issues: readonly string[];

  constructor(issues: readonly string[], options: { operation: string; cause?: unknown }) {
    super(`invalid limit policy: ${issues.join('; ')}`, { ...options, retryable: false });
    this.issues = issues;
  }
}

/** A call argument out of range (empty group, negative duration...). Not retryable. */
export class GroupLimiterArgumentError extends GroupLimiterError {
  override readonly name = 'GroupLimiterArgumentError';
  /** The name of the offending argument. */
  readonly argument: string;

  constructor(message: string, options: { operation: string; argument: string }) {
    super(message, { operation: options.operation, retryable: false });
    this.argument = options.argument;
  }
}

/** Redis failed or answered something unexpected while running a limiter script. */
export class GroupLimiterRedisError extends GroupLimiterError {
  override readonly name = 'GroupLimiterRedisError';

  constructor(message: string, options: { operation: string; retryable: boolean; cause?: unknown }) {
    super(message, options);
  }
}

/** The fleet policy kept changing while an operation retried with the newest one. Retryable. */
export class PolicyVersionRaceError extends GroupLimiterError {
  override readonly name = 'PolicyVersionRaceError';
  /** How many times the operation was attempted. */
  readonly attempts: number;

  constructor(options: { operation: string; attempts: number }) {
    super(`the limit policy changed during each of ${options.attempts} attempts`, {
      operation: options.operation,
      retryable: true,
    });
    this.attempts = options.attempts;
  }
}
