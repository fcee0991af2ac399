import { ConfigError } from '@crawlq/config';
import { CrawlqError, type FailureReason, messageWithReason } from '@crawlq/errors';
import type { DenialReason } from '@crawlq/group-limiter';
import type { RenderedRequest } from '@crawlq/renderer';
import { redactUrl, withoutUserinfo } from '@crawlq/urls';
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
export class DeferJobError extends CrawlqError {
  override readonly name = 'DeferJobError';
  readonly retryInMs: number;
  readonly reason: DeferReason;
  readonly why: string | undefined;
  constructor(retryInMs: number, reason: DeferReason, why?: string) {
    super(`deferred ${retryInMs} ms (${why ?? reason})`, { retryable: true });
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
export class ServerLookupError extends CrawlqError {
  override readonly name = 'ServerLookupError';
  readonly host: string;
  readonly code: string;
  readonly retryInMs: number;
  /** How long this process has seen the host's lookups fail, without an answer between. */
  readonly failingForMs: number;
  readonly overdue: boolean;
  constructor(host: string, cause: unknown, failure: { readonly retryInMs: number; readonly failingForMs: number; readonly overdue: boolean }) {
    const code = String((cause as NodeJS.ErrnoException | undefined)?.code ?? 'ELOOKUP');
    super(`the DNS lookup of ${host} failed (${code}${failure.failingForMs > 0 ? `, failing for ${Math.round(failure.failingForMs)} ms` : ''})`, { cause, retryable: true });
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
export class WorkerStoppingError extends CrawlqError {
  override readonly name = 'WorkerStoppingError';
  readonly graceMs: number;
  constructor(graceMs: number) {
    super(`the worker is stopping: job interrupted after the ${graceMs} ms grace period`, { retryable: true });
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
export class JobLostError extends CrawlqError {
  override readonly name = 'JobLostError';
  readonly url: string;
  constructor(url: string) {
    super(`the job of ${withoutUserinfo(url)} passed to another worker before its record was written: left to that worker`, { retryable: true });
    this.url = url;
  }
}

/** A one-off fetch asked not to wait out its group's pause: the group is paused for `retryInMs`. */
export class GroupPausedError extends CrawlqError {
  override readonly name = 'GroupPausedError';
  readonly group: string;
  readonly retryInMs: number;
  constructor(group: string, retryInMs: number) {
    super(`group ${group} is paused for ${retryInMs} ms`, { retryable: true });
    this.group = group;
    this.retryInMs = retryInMs;
  }
}

/** The job's group stayed blocked (paused, robots.txt unreachable) past --max-blocked: dead-letter it instead of looping. */
export class BlockedGroupError extends CrawlqError {
  override readonly name = 'BlockedGroupError';
  readonly reason = 'blocked-group';
  declare readonly failureReason: 'blocked-group';
  readonly group: string;
  readonly blockedForMs: number;
  constructor(group: string, blockedForMs: number, why: string) {
    super(`group ${group} has been waiting ${Math.round(blockedForMs / 1000)} s (${why}), past --max-blocked`, { retryable: false, failureReason: 'blocked-group' });
    this.group = group;
    this.blockedForMs = blockedForMs;
  }
}

/**
 * The host's robots.txt kept failing (5xx, 429, timeout, refused connection)
 * for the whole --robots-retry-budget: its URLs are dead-lettered, with the
 * last status and error, so `dlq retry` can bring them back later.
 */
export class RobotsUnreachableError extends CrawlqError {
  override readonly name = 'RobotsUnreachableError';
  readonly reason = 'robots-unreachable';
  declare readonly failureReason: 'robots-unreachable';
  readonly robotsUrl: string;
  /** Last HTTP status of robots.txt, `null` for a network error or timeout. */
  readonly status: number | null;
  constructor(options: { robotsUrl: string; status: number | null; error: string; failures: number; forMs: number | null }) {
    const lasted = options.forMs === null ? '' : ` for ${Math.round(options.forMs / 1000)} s`;
    super(`robots.txt ${options.robotsUrl} unreachable${lasted} (${options.failures} tries), last: ${options.error}`, {
      retryable: false,
      failureReason: 'robots-unreachable',
    });
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
 *
 * Not a CrawlqError: BullMQ fails a job at once only for an `instanceof
 * UnrecoverableError`, so this (and PermanentHandlerError) extends that
 * instead, and carries the same two fields by hand.
 */
export class PermanentJobError extends UnrecoverableError {
  readonly retryable = false;
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

export class RedirectStopError extends CrawlqError {
  override readonly name = 'RedirectStopError';
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
    super(`redirect to ${target} not followed (${reason})`, { retryable: false });
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
export class CrawlStoppedWithoutRedisError extends CrawlqError {
  override readonly name = 'CrawlStoppedWithoutRedisError';
  /** What stopped the crawl (SIGTERM, SIGINT, SIGHUP). */
  readonly reason: string;
  constructor(reason: string) {
    // Retryable: running the same command again resumes the crawl.
    super(`${reason} while Redis was not answering`, { retryable: true });
    this.reason = reason;
  }
}

/** A sitemap URL answered with a status other than 2xx. */
export class SitemapStatusError extends CrawlqError {
  override readonly name = 'SitemapStatusError';
  readonly status: number;
  constructor(url: string, status: number) {
    // The statuses the fetcher retries may heal; any other will not.
    super(`HTTP ${status} from ${redactUrl(url)}`, { retryable: status === 408 || status === 429 || status >= 500 });
    this.status = status;
  }
}

/** The gate would not admit a browser request before its page's time was up. */
export class NotAdmittedInTime extends CrawlqError {
  override readonly name = 'NotAdmittedInTime';
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

/** The request may not be made at all. */
export class RequestBlocked extends CrawlqError {
  override readonly name = 'RequestBlocked';
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

/** This process runs another crawler than the crawl in its namespace: exit code 2, one line. */
export class CrawlerMismatchError extends ConfigError {
  override readonly name = 'CrawlerMismatchError';
  readonly fleet: string;
  readonly own: string;
  constructor(own: string, fleet: string, namespace: string) {
    super(
      '--crawler',
      `the crawl in namespace "${namespace}" runs crawler ${fleet}, this process runs ${own}: every worker of a crawl must run the same crawler code (start it with the same file, or use another --namespace)`,
    );
    this.fleet = fleet;
    this.own = own;
  }
}

/**
 * A rendered page went without some of its content requests (their gate did
 * not admit them in the page's time), and the job has attempts left: the
 * page is not recorded with what it has. Retryable: the job uses an attempt
 * and comes back after its backoff, when the hosts' gates may have room.
 */
export class RenderIncompleteError extends CrawlqError {
  override readonly name = 'RenderIncompleteError';
  readonly missing: readonly string[];

  constructor(url: string, missing: readonly RenderedRequest[]) {
    const listed = missing.slice(0, 3).map((request) => `${request.resourceType} ${request.url} (${request.why ?? request.fate})`);
    super(`rendered ${url} without ${missing.length} content request(s) its gate did not admit in time: ${listed.join('; ')}${missing.length > 3 ? '; ...' : ''}`, {
      retryable: true,
    });
    this.missing = missing.map((request) => request.url);
  }
}

/** The fields both failures below carry. */
export interface HandlerFailureFields {
  readonly failureReason: FailureReason | undefined;
  readonly reason: string | undefined;
  readonly handlerStack: string | undefined;
}

/** What a failure is made of: the thrown value, the user's reason, its stack. */
export interface FailureParts {
  readonly cause: unknown;
  readonly reason: string | undefined;
  readonly stack: string | undefined;
}

export class RetryableHandlerError extends CrawlqError implements HandlerFailureFields {
  override readonly name = 'HandlerError';
  declare readonly failureReason: FailureReason | undefined;
  readonly reason: string | undefined;
  readonly handlerStack: string | undefined;
  constructor(message: string, { cause, reason, stack }: FailureParts) {
    // The shared list's word only when the user gave none: the dead letter reads a failureReason first.
    super(message, { retryable: true, failureReason: reason === undefined ? 'handler' : undefined, cause });
    this.reason = reason;
    this.handlerStack = stack;
  }
}

/** BullMQ's UnrecoverableError, not a CrawlqError: see PermanentJobError. */
export class PermanentHandlerError extends UnrecoverableError implements HandlerFailureFields {
  readonly retryable = false;
  readonly failureReason: FailureReason | undefined;
  readonly reason: string | undefined;
  readonly handlerStack: string | undefined;
  constructor(message: string, { cause, reason, stack }: FailureParts) {
    super(message);
    this.cause = cause;
    this.reason = reason;
    this.failureReason = reason === undefined ? 'handler' : undefined;
    this.handlerStack = stack;
  }
}

/** The user's crawler code does not compile: one line, `file:line:column: message`. */
export class CrawlerCompileError extends CrawlqError {
  override readonly name = 'CrawlerCompileError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}
