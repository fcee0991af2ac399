import type { DenialReason } from '@crawlq/group-limiter';
import { UnrecoverableError } from 'bullmq';

/**
 * The job may not start now (its group is rate-limited, at its concurrency
 * cap, or paused, or the crawl-wide cap is reached): it goes back to the delayed set without using an attempt.
 */
export class DeferJobError extends Error {
  override readonly name = 'DeferJobError';
  readonly retryInMs: number;
  readonly reason: DenialReason;
  constructor(retryInMs: number, reason: DenialReason) {
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

/**
 * Why a job stopped at a redirect instead of following it: the target is
 * already seen, out of scope, disallowed by its robots.txt, or handed to the
 * frontier as a job of its own (another group, or the gate held it back).
 * Not a failure: the job ends with a record.
 */
export type RedirectStopReason = 'redirect-to-seen' | 'redirect-queued' | 'scope' | 'robots';

export class RedirectStopError extends Error {
  override readonly name = 'RedirectStopError';
  readonly retryable = false;
  readonly reason: RedirectStopReason;
  /** The hop's URL (without user:password). */
  readonly target: string;
  /** The redirect's status, when known. */
  readonly status: number | undefined;
  /** The robots.txt that disallows the target (reason `robots`). */
  readonly robotsUrl: string | undefined;
  constructor(reason: RedirectStopReason, hop: { readonly target: string; readonly status?: number | undefined; readonly robotsUrl?: string }) {
    super(`redirect to ${hop.target} not followed (${reason})`);
    this.reason = reason;
    this.target = hop.target;
    this.status = hop.status;
    this.robotsUrl = hop.robotsUrl;
  }
}
