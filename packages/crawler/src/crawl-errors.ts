import { UnrecoverableError } from 'bullmq';

/**
 * The job may not start now (its group is rate-limited, at its concurrency
 * cap, or paused): it goes back to the delayed set without using an attempt.
 */
export class DeferJobError extends Error {
  override readonly name = 'DeferJobError';
  readonly retryInMs: number;
  readonly reason: 'rate' | 'concurrency' | 'paused';
  constructor(retryInMs: number, reason: 'rate' | 'concurrency' | 'paused') {
    super(`deferred ${retryInMs} ms (${reason})`);
    this.retryInMs = retryInMs;
    this.reason = reason;
  }
}

/** The job's group stayed paused past --max-blocked: dead-letter it instead of looping. */
export class BlockedGroupError extends Error {
  override readonly name = 'BlockedGroupError';
  readonly retryable = false;
  readonly reason = 'blocked-group';
  readonly group: string;
  readonly blockedForMs: number;
  constructor(group: string, blockedForMs: number) {
    super(`group ${group} has been paused for ${Math.round(blockedForMs / 1000)} s, past --max-blocked`);
    this.group = group;
    this.blockedForMs = blockedForMs;
  }
}

/**
 * A failure no retry can fix (SSRF-blocked, bad scheme, body too large, a
 * group blocked too long). Extends BullMQ's UnrecoverableError so the job
 * fails at once, and keeps the structured fields the dead-letter entry needs.
 */
export class PermanentJobError extends UnrecoverableError {
  readonly reason: string;
  readonly status: number | null;
  constructor(reason: string, message: string, options: { cause?: unknown; status?: number | null } = {}) {
    super(`${reason}: ${message}`);
    this.reason = reason;
    this.status = options.status ?? null;
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/** The fetch was redirected to a page already seen: it is not fetched again. */
export class RedirectToSeenError extends Error {
  override readonly name = 'RedirectToSeenError';
  readonly retryable = false;
  readonly target: string;
  constructor(target: string) {
    super(`redirects to ${target}, already seen`);
    this.target = target;
  }
}
