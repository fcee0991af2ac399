import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Frontier } from '@crawlq/frontier';

/**
 * The fleet releases at most about this often (less while no group is due),
 * each worker at a random phase and at most every N x PERIOD_MS when N
 * workers release: a release moves the slots of
 * the next 400 ms (RELEASE_WINDOW_MS) of every due group, so a period well
 * below that keeps every group's slots covered. The fleet's releases cost a
 * few round trips per period, not per page and not per worker; and fewer,
 * larger releases wake the idle workers fewer times (each wake costs BullMQ
 * two round trips on every worker it reaches).
 */
const PERIOD_MS = 100;
/** After a release that used all its room: more may be due at once. */
const AGAIN_MS = 10;
/**
 * After a release that moved jobs and held back more only because a group or
 * the queue had its most waiting jobs: a group with no rate and a high cap
 * (one big site) goes as fast as the workers take its jobs, which a
 * fleet-wide ten releases a second would cap. (A release that moved nothing
 * waits the usual period: the workers are not taking jobs.)
 */
const SATURATED_MS = 20;
/** After a failed release (Redis away): the next try. */
const RETRY_MS = 1_000;
/**
 * The longest a releaser sleeps while groups wait but none is due: URLs that
 * another process (a producer, another worker) adds to a group with none
 * waiting are released within about this long. This process's own additions
 * wake it sooner (see {@link BacklogReleaser.nudge}), and while no group
 * waits at all the loop keeps the fleet's pace, so seeds that a producer
 * adds to an idle fleet go out at once.
 */
const IDLE_MS = 1_000;

export interface BacklogReleaserOptions {
  /** Read per release: the frontier is rebuilt when the crawl definition changes. */
  readonly frontier: () => Frontier;
  /** This process's job concurrency: each release tops the queue up to a few times it. */
  readonly concurrency: number;
  readonly onError: (error: unknown) => void;
  /** The longest sleep while groups wait but none is due (tests lengthen it). @default IDLE_MS */
  readonly idleMs?: number;
}

/**
 * Each worker process releases due URLs from the backlogs into the crawl
 * queue on a loop (stage two of the frontier). Every worker does, so the
 * fleet needs no leader: the release script is atomic, and a process killed
 * mid-release released all of its batch or none of it.
 */
export class BacklogReleaser {
  readonly #options: BacklogReleaserOptions;
  readonly #stop = new AbortController();
  readonly #id = randomUUID();
  readonly #done: Promise<void>;
  /** Ends the current sleep early (see nudge). */
  #wake: AbortController | undefined;
  /** Nudged since the release in progress read the groups: it may have missed the new URLs. */
  #nudged = false;

  constructor(options: BacklogReleaserOptions) {
    this.#options = options;
    this.#done = this.#run();
  }

  /**
   * This process added URLs to the backlogs: a group that had none waiting
   * is due at once, so a sleep that waits for a later group is cut to the
   * fleet's pace (never shorter: nudges cost no more Redis work than the
   * loop without them).
   */
  nudge(): void {
    this.#nudged = true;
    this.#wake?.abort();
  }

  async #run(): Promise<void> {
    const { signal } = this.#stop;
    // Waiting jobs the queue may hold: enough for this process's slots twice over, and some for the groups' turns.
    const readyTarget = this.#options.concurrency * 2 + 16;
    while (!signal.aborted) {
      let waitMs: number;
      let paceMs: number;
      this.#nudged = false;
      try {
        const { released, jobs, releasers, saturated, nextDueMs } = await this.#options.frontier().release({ room: readyTarget, readyTarget, releaser: this.#id });
        paceMs = PERIOD_MS * releasers * (0.8 + 0.4 * Math.random());
        if (jobs >= readyTarget) waitMs = AGAIN_MS;
        else if (saturated && released > 0) waitMs = SATURATED_MS * (0.8 + 0.4 * Math.random());
        else {
          // A release before the next group is due finds nothing to do. The
          // spread keeps the fleet's releasers from all coming at that moment.
          const untilDue = nextDueMs === undefined ? 0 : Math.min(nextDueMs, this.#options.idleMs ?? IDLE_MS);
          waitMs = untilDue <= paceMs ? paceMs : untilDue + Math.random() * PERIOD_MS;
        }
      } catch (error) {
        this.#options.onError(error);
        waitMs = paceMs = RETRY_MS;
      }
      await this.#sleep(waitMs, Math.min(waitMs, paceMs), signal);
    }
  }

  /** Sleeps `ms`, or `paceMs` from now when nudged. */
  async #sleep(ms: number, paceMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const startedAt = performance.now();
    const wake = new AbortController();
    if (this.#nudged) wake.abort();
    this.#wake = wake;
    const stop = () => wake.abort();
    signal.addEventListener('abort', stop, { once: true });
    await sleepUntil(startedAt + ms, wake.signal);
    signal.removeEventListener('abort', stop);
    this.#wake = undefined;
    if (signal.aborted || !wake.signal.aborted) return;
    await sleepUntil(startedAt + paceMs, signal);
  }

  /** Stops after the release in progress, if any. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }
}

/**
 * Sleeps until `performance.now()` reaches `until`, or `signal` aborts. Timers
 * keep whole milliseconds by a clock read at the loop's turn, so one can fire
 * a fraction of a millisecond early: the rest is slept again, and a release
 * never comes closer than the pace.
 */
async function sleepUntil(until: number, signal: AbortSignal): Promise<void> {
  for (let left = until - performance.now(); left > 0 && !signal.aborted; left = until - performance.now()) {
    await sleep(Math.ceil(left), undefined, { signal }).catch(() => undefined);
  }
}
