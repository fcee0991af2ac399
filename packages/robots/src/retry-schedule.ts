/** An origin's run of failed robots.txt fetches, shared by the fleet (see `RobotsStore.readStreak`). */
export interface FailureStreak {
  /** When the first failed fetch of the run started (ms since the epoch). */
  readonly since: number;
  /** Failed fetches in the run, the latest included. */
  readonly failures: number;
}

/** How robots.txt failures are retried; see `RobotsPolicyOptions`. */
export interface RetrySettings {
  readonly retryBudgetMs: number;
  readonly firstRetryMs: number;
  readonly maxRetryAfterMs: number;
}

/** Fetch robots.txt again after `retryInMs`, or give up on the origin for now. */
export type RetryPlan = { readonly gaveUp: false; readonly retryInMs: number } | { readonly gaveUp: true };

// One retry per second is as eager as a polite crawler gets.
const MIN_RETRY_MS = 1_000;

/**
 * When to fetch robots.txt again after a failed fetch that started at `at`.
 * A server's `Retry-After` (429, 503) is honoured, capped at `maxRetryAfterMs`;
 * other failures back off exponentially from `firstRetryMs`, the last retry
 * landing on the end of the budget. A failure once the run is `retryBudgetMs`
 * old gives up, so an origin that stays down ends its URLs' wait in a bounded
 * time instead of holding them forever.
 */
export function planRetry(streak: FailureStreak, failure: { at: number; retryAfterMs?: number | undefined }, settings: RetrySettings): RetryPlan {
  const remainingMs = streak.since + settings.retryBudgetMs - failure.at;
  if (remainingMs <= 0) return { gaveUp: true };
  if (failure.retryAfterMs !== undefined) {
    return { gaveUp: false, retryInMs: Math.max(MIN_RETRY_MS, Math.min(failure.retryAfterMs, settings.maxRetryAfterMs)) };
  }
  const backoffMs = settings.firstRetryMs * 2 ** Math.min(30, Math.max(0, streak.failures - 1));
  return { gaveUp: false, retryInMs: Math.max(MIN_RETRY_MS, Math.min(backoffMs, remainingMs)) };
}
