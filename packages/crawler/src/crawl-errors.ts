import { messageWithReason, withoutUserinfo, type FailureReason } from '@crawlq/urls';
import type { DenialReason } from '@crawlq/group-limiter';
import { UnrecoverableError } from 'bullmq';

/**
 * Why the gate held a request back: a limit (the limiter's reasons), or
 * `server-lookup`, its host's DNS lookup failed for now (no server can count
 * the request until its address is known).
 */
export type GateDenialReason = DenialReason | 'server-lookup';

/** Why a job is deferred: ordinary pacing (`rate`, `concurrency`, `server-lookup`) or a wait that counts toward --max-blocked. */
export type DeferReason = GateDenialReason | 'robots';

/**
 * The job may not start now (its group is rate-limited, at its concurrency
 * cap, paused, the crawl-wide cap is reached, or its robots.txt is unreachable):
 * it goes back to the delayed set without using an attempt. `why` says it in
 * words for blocked waits.
 */
export class DeferJobError extends Error {
  override readonly name = 'DeferJobError';
  readonly retryInMs: number;
  readonly reason: DeferReason;
  readonly why: string | undefined;
  constructor(retryInMs: number, reason: DeferReason, why?: string) {
    super(`deferred ${retryInMs} ms (${why ?? reason})`);
    this.retryInMs = retryInMs;
    this.reason = reason;
    this.why = why;
  }
}

/**
 * The server gate could not learn a host's address: its lookup failed in a
 * way that may heal (a timeout, SERVFAIL, EAI_AGAIN; `code` is the lookup's).
 * The request must not go out, as no server would count it. Until
 * `overdue` (the host has failed for LOOKUP_GRACE_MS) the gate holds it back
 * for `retryInMs`; after, its fetch fails with this as the cause.
 */
export class ServerLookupError extends Error {
  override readonly name = 'ServerLookupError';
  readonly host: string;
  readonly code: string;
  readonly retryInMs: number;
  /** How long this process has seen the host's lookups fail, without an answer between. */
  readonly failingForMs: number;
  readonly overdue: boolean;
  constructor(host: string, cause: unknown, failure: { readonly retryInMs: number; readonly failingForMs: number; readonly overdue: boolean }) {
    const code = String((cause as NodeJS.ErrnoException | undefined)?.code ?? 'ELOOKUP');
    super(`the DNS lookup of ${host} failed (${code}${failure.failingForMs > 0 ? `, failing for ${Math.round(failure.failingForMs)} ms` : ''})`, { cause });
    this.host = host;
    this.code = code;
    this.retryInMs = failure.retryInMs;
    this.failingForMs = failure.failingForMs;
    this.overdue = failure.overdue;
  }
}

/**
 * The worker is stopping and the job outlived the grace period: its fetch is
 * aborted with this reason, its gate slot given back, and the job goes back
 * to the queue for another worker without using an attempt.
 */
export class WorkerStoppingError extends Error {
  override readonly name = 'WorkerStoppingError';
  readonly graceMs: number;
  constructor(graceMs: number) {
    super(`the worker is stopping: job interrupted after the ${graceMs} ms grace period`);
    this.graceMs = graceMs;
  }
}

/**
 * The job is no longer this worker's when its record is due: its lock ran
 * out (Redis, or the master of its slot, was away longer than the lock) and
 * the job went back to the queue or to another worker. The record is left to
 * whoever holds the job now, so the results hold it once; this worker leaves
 * the job as it is (no failure, no attempt, no hand-back).
 */
export class JobLostError extends Error {
  override readonly name = 'JobLostError';
  readonly url: string;
  constructor(url: string) {
    super(`the job of ${withoutUserinfo(url)} passed to another worker before its record was written: left to that worker`);
    this.url = url;
  }
}

/** A one-off fetch asked not to wait out its group's pause: the group is paused for `retryInMs`. */
export class GroupPausedError extends Error {
  override readonly name = 'GroupPausedError';
  readonly group: string;
  readonly retryInMs: number;
  constructor(group: string, retryInMs: number) {
    super(`group ${group} is paused for ${retryInMs} ms`);
    this.group = group;
    this.retryInMs = retryInMs;
  }
}

/** The job's group stayed blocked (paused, robots.txt unreachable) past --max-blocked: dead-letter it instead of looping. */
export class BlockedGroupError extends Error {
  override readonly name = 'BlockedGroupError';
  readonly retryable = false;
  readonly reason = 'blocked-group';
  readonly failureReason: FailureReason = 'blocked-group';
  readonly group: string;
  readonly blockedForMs: number;
  constructor(group: string, blockedForMs: number, why: string) {
    super(`group ${group} has been waiting ${Math.round(blockedForMs / 1000)} s (${why}), past --max-blocked`);
    this.group = group;
    this.blockedForMs = blockedForMs;
  }
}

/**
 * The host's robots.txt kept failing (5xx, 429, timeout, refused connection)
 * for the whole --robots-retry-budget: its URLs are dead-lettered, with the
 * last status and error, so `dlq retry` can bring them back later.
 */
export class RobotsUnreachableError extends Error {
  override readonly name = 'RobotsUnreachableError';
  readonly retryable = false;
  readonly reason = 'robots-unreachable';
  readonly failureReason: FailureReason = 'robots-unreachable';
  readonly robotsUrl: string;
  /** Last HTTP status of robots.txt, `null` for a network error or timeout. */
  readonly status: number | null;
  constructor(options: { robotsUrl: string; status: number | null; error: string; failures: number; forMs: number | null }) {
    const lasted = options.forMs === null ? '' : ` for ${Math.round(options.forMs / 1000)} s`;
    super(`robots.txt ${options.robotsUrl} unreachable${lasted} (${options.failures} tries), last: ${options.error}`);
    this.robotsUrl = options.robotsUrl;
    this.status = options.status;
  }
}

/**
 * A failure no retry can fix (SSRF-blocked, bad scheme, body too large, a
 * group blocked too long). Extends BullMQ's UnrecoverableError so the job
 * fails at once, and keeps the structured fields the dead-letter entry needs.
 * Its message starts with the reason (`messageWithReason`): BullMQ keeps only
 * the message, and a worker may die before recording the dead letter.
 */
export class PermanentJobError extends UnrecoverableError {
  readonly reason: FailureReason;
  readonly failureReason: FailureReason;
  readonly status: number | null;
  constructor(reason: FailureReason, message: string, options: { cause?: unknown; status?: number | null } = {}) {
    super(messageWithReason(reason, message));
    this.reason = reason;
    this.failureReason = reason;
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
    // The Location came from the site: it may carry user:password.
    const target = withoutUserinfo(hop.target);
    super(`redirect to ${target} not followed (${reason})`);
    this.reason = reason;
    this.target = target;
    this.status = hop.status;
    this.robotsUrl = hop.robotsUrl;
  }
}

/**
 * `crawl` was stopped by a signal while Redis did not answer: it stopped its
 * workers within the grace period (plus a bounded margin) instead of waiting
 * for Redis, and has no final counts to report. Nothing is lost: the jobs in
 * flight stay active in Redis and go back to the queue once it is back (the
 * stalled-job check); running the same command again resumes the crawl.
 */
export class CrawlStoppedWithoutRedisError extends Error {
  override readonly name = 'CrawlStoppedWithoutRedisError';
  /** What stopped the crawl (SIGTERM, SIGINT, SIGHUP). */
  readonly reason: string;
  constructor(reason: string) {
    super(`${reason} while Redis was not answering`);
    this.reason = reason;
  }
}
