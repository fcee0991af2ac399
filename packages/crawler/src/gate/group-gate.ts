import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcquireRequest, GroupLimiter, Lease, Outcome, PaceChange, RetakenStart } from '@crawlq/group-limiter';
import { ServerLookupError, type GateDenialReason } from '../errors.js';
import { BoundedMap } from './bounded-map.js';
import { processEventLoopStalls, type EventLoopStalls } from './event-loop-stalls.js';

/** In-process sleeps for a group slot up to this long; longer waits become BullMQ deferrals. */
export const MAX_INLINE_WAIT_MS = 500;
/** A busy process that misses its slot this often in a row hands the job back to the queue. */
const MAX_LATE_STARTS = 2;
const LATE_RETRY_MS = 200;
/**
 * A late start retaken now gets this much grace at most: the group's pacing
 * moves back by as much as the start was late (capped here), so its reply,
 * crossing the same busy event loop, may be that late again without crowding
 * the next start. Without it a loaded process missed the retaken start too,
 * gave it back and waited a whole interval for the next, again and again.
 */
const MAX_RETAKE_GRACE_MS = 200;
const MIN_RETAKE_GRACE_MS = 10;
/** Retakes of one late start at most (each with twice the grace of the last) before it is given back. */
const MAX_RETAKES = 3;
/**
 * Weight of a start's lateness in the process's moving average of it, and
 * how many times that average a start asks as grace (see AcquireRequest.graceMs):
 * on a busy machine nearly every start missed its few milliseconds of
 * allowance, and each miss cost a retake (a round trip and a dozen Redis
 * commands) or two; asked up front, the grace costs nothing more.
 */
const LATENESS_WEIGHT = 0.2;
const GRACE_PER_LATENESS = 2;
/** Below this average lateness (ms) a start asks no grace. */
const MIN_GRACE_LATENESS_MS = 1;
/** A start reserved far enough ahead to be confirmed is confirmed this long before it. */
const CONFIRM_LEAD_MS = 25;

/**
 * A job whose start slot the release step set (`CrawlJobData.due`) asks the
 * gate this long before it: the admission is then near (under the limiter's
 * 50 ms), so the start is checked once, not again when it comes, and the
 * reply has that long to come back before the start (on a busy machine it
 * takes tens of milliseconds, and a start it makes late costs a retake).
 */
const DUE_LEAD_MS = 35;
/** Groups whose next start a gate remembers (see GroupGate's nextStarts): a bound for crawls of millions of hosts. */
const NEXT_STARTS_KEPT = 10_000;

/** The limiter calls a gate makes (without `localTimeOf`, slots are not waited for before asking). */
export type GateLimiter = Pick<GroupLimiter, 'acquire' | 'confirmStart' | 'abandon' | 'release' | 'reportSlip' | 'status'> &
  Partial<Pick<GroupLimiter, 'localTimeOf' | 'retakeLateStart'>>;

/** The gate would not let a request start within the inline wait: ask again after `retryInMs`. */
export interface GateDenial {
  readonly admitted: false;
  readonly retryInMs: number;
  readonly reason: GateDenialReason;
}

/** What a request's answer was, as far as the gate cares. */
export interface RequestOutcome {
  /** HTTP status; omit when no response arrived. A value that is no HTTP status (`000`) is dropped. */
  readonly status?: number | undefined;
  readonly retryAfterMs?: number | undefined;
  /** No response: it timed out or its connection failed (adaptive pacing counts both as congestion). */
  readonly failure?: 'timeout' | 'network' | undefined;
}

/** What a gate tells its owner about the requests it admits. */
export interface GateOptions {
  /** A release changed its group's adaptive pace (the worker logs it and counts it). Must not throw. */
  readonly onPaceChange?: (change: PaceChange) => void;
  /**
   * The address a host's connections go to (see AddressBook): the request's
   * server must admit it too. Undefined (the host has no address, or no
   * server level): the group's gate only. A {@link ServerLookupError} (the
   * lookup failed for now): the request is held back (`server-lookup`), or
   * fails once the error is overdue; it never goes out uncounted.
   */
  readonly addressOf?: (host: string) => Promise<string | undefined>;
  /** How late the event loop runs, left out of a response's latency (default: the process's own tracker). */
  readonly eventLoopStalls?: EventLoopStalls;
}

/**
 * One admitted request start: holds its group's concurrency slot from the
 * gate's admission to `release`. One lease admits one request (a retry or a
 * redirect hop takes a lease of its own). `release` runs once, whatever calls
 * it how often, and never throws: a release Redis did not take costs the slot
 * only until its lease time runs out.
 */
export class GateLease {
  readonly group: string;
  readonly #limiter: GateLimiter;
  #lease: Lease;
  #startBy: number;
  readonly #options: GateOptions;
  #sentAt: number | undefined;
  #sentAtLocal = 0;
  #latencyMs: number | undefined;
  #stalls: EventLoopStalls | undefined;
  #released = false;

  constructor(limiter: GateLimiter, admitted: { readonly lease: Lease; readonly startBy: number }, options: GateOptions = {}) {
    this.#limiter = limiter;
    this.#lease = admitted.lease;
    this.group = admitted.lease.group;
    this.#startBy = admitted.startBy;
    this.#options = options;
  }

  /** Epoch ms at which the admitted request reached the socket; undefined until it did. */
  get sentAt(): number | undefined {
    return this.#sentAt;
  }

  get released(): boolean {
    return this.#released;
  }

  /**
   * The admitted request reached the socket. If the process stalled between
   * the gate's check and the socket, the pacing of its group (and of its
   * server, when that level admitted it too) moves back by the excess (fire
   * and forget: a failed report only loses that correction).
   * A second call is ignored: a second request is not admitted by this lease.
   */
  markSent(): void {
    if (this.#sentAt !== undefined || this.#released) return;
    this.#sentAt = Date.now();
    this.#sentAtLocal = performance.now();
    this.#stalls = this.#options.eventLoopStalls ?? processEventLoopStalls();
    const lateMs = this.#sentAtLocal - this.#startBy;
    if (lateMs > 0) this.#limiter.reportSlip(this.group, lateMs, this.#lease.server).catch(() => undefined);
  }

  /**
   * Called last before the admitted request goes out: whatever ran since the
   * gate let it go (a busy event loop, the caller's own round trips) may have
   * made it later than its start allowed, and then it would crowd the next
   * starts of its group and server, reserved meanwhile, as the server sees
   * them. A late start is retaken (it goes now, its pacing moving back by the
   * lateness) when no later start was admitted, else given back: false, and
   * the caller asks the gate again. On time: true, at no cost.
   */
  async keepIfOnTime(): Promise<boolean> {
    if (this.#released) return false;
    if (this.#sentAt !== undefined || performance.now() <= this.#startBy) return true;
    const retaken = await retakeOrGiveBack(this.#limiter, this.#lease, performance.now() - this.#startBy);
    if (retaken === undefined) {
      this.#released = true;
      return false;
    }
    this.#startBy = retaken.startBy;
    this.#lease = retaken.lease;
    return true;
  }

  /**
   * The admitted request's response head arrived: its latency is what
   * adaptive pacing judges, less the stall that held this process's event
   * loop up just before it saw the head (a busy process must not slow a
   * healthy site down).
   */
  markResponseHead(): void {
    if (this.#sentAt === undefined || this.#latencyMs !== undefined || this.#released) return;
    const now = performance.now();
    const elapsed = now - this.#sentAtLocal;
    this.#latencyMs = elapsed - Math.min(elapsed, this.#stalls?.stallBefore(now) ?? 0);
  }

  /** Gives the slot back and reports the outcome (a 429 pauses the group). Idempotent. */
  async release(outcome: RequestOutcome = {}): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    const sent = this.#sentAt !== undefined;
    const change = await this.#limiter.release(this.#lease, limiterOutcome(outcome, { sent, latencyMs: this.#latencyMs })).catch(() => null);
    if (change) this.#options.onPaceChange?.(change);
  }
}

/**
 * The politeness gate of a worker process: every request that leaves it
 * (a job's first request, got's retries, each redirect hop, robots.txt and
 * sitemap fetches) asks here for a {@link GateLease} of the group it goes to.
 */
export class GroupGate {
  readonly #limiter: GateLimiter;
  readonly #options: GateOptions;
  /** Moving average of how late (ms) this process's spaced starts were past their reserved time. */
  #latenessMs = 0;
  /**
   * Per group, the earliest its next start can be (Redis clock), from this
   * process's last admission of it: a job's slots were given out when it was
   * released, and a group whose starts ran behind them (its jobs waited for
   * a worker) would otherwise be asked early, reserve ahead and confirm.
   */
  readonly #nextStarts = new BoundedMap<string, number>(NEXT_STARTS_KEPT);

  constructor(limiter: GateLimiter, options: GateOptions = {}) {
    this.#limiter = limiter;
    this.#options = options;
  }

  /** Why the group is paused, as the limiter recorded it (undefined: not paused, or unreadable). */
  async pauseReason(group: string): Promise<string | undefined> {
    return this.#limiter.status(group).then(
      (status) => status.pauseReason ?? undefined,
      () => undefined,
    );
  }

  /**
   * Asks for one request start (shortly before the job's release slot, when
   * it has one) and waits out a short reserved delay. Admits only when the
   * request may start at once: not paused meanwhile, and not so late for its
   * slot (a busy event loop) that it could crowd the next start as the server
   * sees it. A late start goes now after all when no later start of its group
   * was admitted (the group is re-paced from it); otherwise it is given back
   * unused and asked for again. An abort or error while waiting gives the slot back.
   */
  async pass(group: string, options: PassOptions): Promise<{ readonly admitted: true; readonly lease: GateLease } | GateDenial> {
    const limiter = this.#limiter;
    await this.#untilNear(group, options);
    // Asked each time: a host whose address changed moves to its new server's gate.
    // Asked before any slot is taken: a slow lookup holds nothing at either level.
    let address: string | undefined;
    try {
      address = options.host === undefined ? undefined : await this.#options.addressOf?.(options.host);
    } catch (error) {
      // No address, no server to count the request at: it waits, as a denial, until the lookup answers.
      if (error instanceof ServerLookupError && !error.overdue) return { admitted: false, retryInMs: error.retryInMs, reason: 'server-lookup' };
      throw error;
    }
    for (let late = 0; late < MAX_LATE_STARTS; late += 1) {
      const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: options.maxInlineWaitMs, slot: options.due, progress: options.progress, address, graceMs: this.#graceMs() });
      if (!admission.admitted) return { admitted: false, retryInMs: admission.retryInMs, reason: admission.reason };
      if (admission.nextStartAt !== undefined) this.#nextStarts.remember(group, admission.nextStartAt);
      try {
        const sleepOptions = options.signal ? { signal: options.signal } : undefined;
        // A 429 seen by any worker while this start waited, or the concurrency
        // cap filled by earlier reservations, must stop it too (confirmStart
        // gives the lease back itself when it says no). Checked a little
        // before the start, so its own round trip does not make the start late.
        if (admission.confirmBeforeStart) {
          const untilCheck = admission.localStartAt - CONFIRM_LEAD_MS - performance.now();
          if (untilCheck > 0) await sleep(untilCheck, undefined, sleepOptions);
          const check = await limiter.confirmStart(admission.lease);
          if (!check.go) return { admitted: false, retryInMs: check.retryInMs + Math.round(Math.random() * 100), reason: check.reason };
        }
        const waitMs = admission.localStartAt - performance.now();
        if (waitMs > 0) await sleep(waitMs, undefined, sleepOptions);
      } catch (error) {
        await limiter.release(admission.lease).catch(() => undefined);
        throw error;
      }
      const lateMs = Math.max(0, performance.now() - admission.localStartAt);
      if (Number.isFinite(admission.startBy)) this.#latenessMs += (lateMs - this.#latenessMs) * LATENESS_WEIGHT;
      if (performance.now() <= admission.startBy) return { admitted: true, lease: new GateLease(limiter, admission, this.#options) };
      // Missed: start now after all if no later start of the group was
      // admitted, else give it back and ask again.
      const retaken = await retakeOrGiveBack(limiter, admission.lease, Math.max(lateMs, this.#graceMs()));
      if (retaken !== undefined) return { admitted: true, lease: new GateLease(limiter, retaken, this.#options) };
    }
    return { admitted: false, retryInMs: LATE_RETRY_MS + Math.round(Math.random() * LATE_RETRY_MS), reason: 'rate' };
  }

  /** The grace a start asks for: a few times how late this process's starts have lately been (none while they are on time). */
  #graceMs(): number {
    if (this.#latenessMs < MIN_GRACE_LATENESS_MS) return 0;
    return Math.min(MAX_RETAKE_GRACE_MS, Math.ceil(GRACE_PER_LATENESS * this.#latenessMs));
  }

  /**
   * Sleeps, holding nothing, until shortly before a start slot `due` (Redis
   * clock) moved by the group's lag, or before the group's next start as
   * this process's last admission of it gave it, whichever is later: asked
   * then, the gate admits a near start, checked once. Asked at once, it would
   * reserve the slot ahead and check it again when it comes (a second round
   * trip). Where the gate puts the start is still the gate's decision.
   * Without the clock's offset (no admission yet) or for a slot past, the
   * gate is asked at once.
   */
  async #untilNear(group: string, options: PassOptions): Promise<void> {
    if (options.due === undefined) return;
    const at = this.#limiter.localTimeOf?.(group, Math.max(options.due + (options.lag ?? 0), this.#nextStarts.get(group) ?? 0));
    if (at === undefined) return;
    const waitMs = Math.min(at - DUE_LEAD_MS - performance.now(), options.maxDueWaitMs ?? options.maxInlineWaitMs);
    const signals = [options.signal, options.dueWaitSignal].filter((signal) => signal !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    if (waitMs <= 0) return;
    const wait = () => sleep(waitMs, undefined, signal ? { signal } : undefined);
    await (options.idle ? options.idle(wait) : wait());
  }
}

/**
 * A start found past its deadline (`lateMs` past it, or past its slot): goes
 * now after all if no later start of its group (or server) was admitted, its
 * pacing moving back by the lateness and by a grace for the reply to come
 * back late too; resolves to the lease with its new start and its new deadline. A retaken start that is late
 * again is retaken again with twice the grace while it is still the latest: a
 * busy event loop costs a round trip, not the group's next interval. Else the
 * start is given back and this resolves to undefined. A limiter that cannot
 * retake gives it back.
 */
async function retakeOrGiveBack(limiter: GateLimiter, lease: Lease, lateMs: number): Promise<{ readonly lease: Lease; readonly startBy: number } | undefined> {
  let graceMs = Math.min(MAX_RETAKE_GRACE_MS, Math.max(MIN_RETAKE_GRACE_MS, lateMs));
  // `null`: given back already; undefined: no answer, so still held.
  let retaken: RetakenStart | null | undefined;
  for (let retake = 0; retake < MAX_RETAKES && limiter.retakeLateStart !== undefined; retake += 1) {
    retaken = await limiter.retakeLateStart(lease, graceMs).catch(() => undefined);
    if (!retaken) break;
    if (performance.now() <= retaken.startBy) return { lease: { ...lease, startAt: retaken.startAt }, startBy: retaken.startBy };
    graceMs = Math.min(MAX_RETAKE_GRACE_MS, graceMs * 2);
  }
  if (retaken !== null) await limiter.abandon(lease).catch(() => undefined);
  return undefined;
}

/** How one request asks the gate. */
export interface PassOptions {
  /** Longest in-process wait for a reserved start; longer waits are denials. */
  readonly maxInlineWaitMs: number;
  /** The request's host: its address names the server whose gate it also passes (see GateOptions.addressOf). */
  readonly host?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The start slot the release step gave the job (`CrawlJobData.due`, Redis clock). */
  readonly due?: number | undefined;
  /** How far the group's starts ran behind its slots when the job was released (`CrawlJobData.lag`, ms). */
  readonly lag?: number | undefined;
  /** A job of several URLs moving on to another: recorded by the admission (see AcquireRequest.progress). */
  readonly progress?: AcquireRequest['progress'];
  /**
   * Longest sleep before `due` (default maxInlineWaitMs): a later URL of a job
   * of several waits for its slot, as the job was made for; `dueWaitSignal`
   * (the worker beginning to stop) cuts that sleep short.
   */
  readonly maxDueWaitMs?: number | undefined;
  readonly dueWaitSignal?: AbortSignal | undefined;
  /** Runs the sleep before `due` (see maxDueWaitMs): the caller may give up what it holds meanwhile (its worker's request slot). */
  readonly idle?: (<T>(wait: () => Promise<T>) => Promise<T>) | undefined;
}

/**
 * The limiter's outcome: only real HTTP statuses (a `000` status line would
 * be an argument error and leak the slot). A failure counts even when the
 * request never reached the socket: a refused or timed-out connection is the
 * site's answer too.
 */
function limiterOutcome(outcome: RequestOutcome, request: { sent: boolean; latencyMs: number | undefined }): Outcome {
  const { status, retryAfterMs, failure } = outcome;
  const { sent, latencyMs } = request;
  return {
    ...(status !== undefined && Number.isInteger(status) && status >= 100 && status <= 999 ? { status } : {}),
    ...(retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? { retryAfterMs } : {}),
    ...(sent && latencyMs !== undefined && latencyMs >= 0 ? { latencyMs } : {}),
    ...(status === undefined && failure !== undefined ? { failure } : {}),
    sent,
  };
}
