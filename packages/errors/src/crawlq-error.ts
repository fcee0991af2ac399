import type { FailureReason } from './failure-reason.js';

/** What every crawlq error is made with, beside its message. */
export interface CrawlqErrorOptions {
  /**
   * Whether the same call, or the job's next attempt, may succeed: true for
   * what heals with time (Redis away, a host timing out), false for what
   * needs a person (a bad option, a refused URL).
   */
  readonly retryable: boolean;
  /** Why a crawl job failed, from the shared list; only for errors that fail a job with a reason of their own. */
  readonly failureReason?: FailureReason | undefined;
  /** The error this one wraps, kept as the standard `cause`. */
  readonly cause?: unknown;
}

/**
 * The one base of the errors crawlq throws on its own behalf. Each package
 * declares its errors in its `errors.ts`, each extending this (directly or
 * through the package's own base), so every error answers the same two
 * questions the same way: `retryable` (may trying again help?) and
 * `failureReason` (what a dead letter calls it, when it fails a job).
 *
 * `failureReason`, not `reason`: several errors already carry a `reason` of
 * their own kind (which URL rule refused, why a job was deferred, the user's
 * words), and the dead letters read a valid `failureReason` first.
 *
 * The name stays each subclass's own, as before: messages, names and the
 * dead-letter reason of every error are unchanged by this base.
 */
export abstract class CrawlqError extends Error {
  /** Whether the same call, or the job's next attempt, may succeed. */
  readonly retryable: boolean;
  /** Why a crawl job failed, from the shared list; absent when the error says nothing of the kind. */
  declare readonly failureReason?: FailureReason | undefined;

  constructor(message: string, options: CrawlqErrorOptions) {
    // No `cause` key at all when there is none, as `new Error(message)` makes it.
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable;
    if (options.failureReason !== undefined) this.failureReason = options.failureReason;
  }
}
