import type { PermanentFetchReason } from './fetch-error.js';

/**
 * Raised inside got (DNS lookup, hooks, redirect check) when the fetch policy
 * refuses a target. got wraps it in a RequestError (as `cause`); `fetch()`
 * finds it there and turns it into a {@link PermanentFetchError}.
 * Not retryable: its `code` is not one of got's retry error codes.
 */
export class PolicyViolation extends Error {
  override readonly name = 'PolicyViolation';
  readonly code = 'ERR_CRAWLQ_POLICY';
  readonly retryable = false;
  readonly reason: PermanentFetchReason;
  /** The same as `reason`, under the name every crawlq error uses for it. */
  readonly failureReason: PermanentFetchReason;

  constructor(reason: PermanentFetchReason, message: string) {
    super(message);
    this.reason = reason;
    this.failureReason = reason;
  }
}

/** The first {@link PolicyViolation} in `error`'s `cause` chain, if any. */
export function findPolicyViolation(error: unknown): PolicyViolation | undefined {
  let current: unknown = error;
  // Bounded walk: cause chains are short, and a cycle must not hang us.
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof PolicyViolation) return current;
    current = current.cause;
  }
  return undefined;
}
