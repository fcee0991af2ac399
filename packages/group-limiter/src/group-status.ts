import type { GroupLimits, RateLimit } from './policy.js';

/** What an admin sees about one group. Times are epoch ms on the Redis clock. */
export interface GroupStatus {
  readonly group: string;
  /** Limits resolved from the current policy. */
  readonly limits: GroupLimits;
  /**
   * The group's own minimum interval between starts (`setMinInterval`, e.g. a
   * robots.txt Crawl-delay), capped by the policy's `maxMinIntervalMs`; 0 = none.
   * Pacing uses the longer of this and the interval from `limits.rate`.
   */
  readonly minIntervalMs: number;
  /**
   * The spacing the gate enforces between this group's starts (ms): the rate's
   * own spacing plus its margin (see `LimitPolicy.spacingMargin`), or the
   * minimum interval when that is longer, divided by `paceFactor`; 0 = no rate
   * limit. 1000 / paceMs is the effective pace in requests per second.
   */
  readonly paceMs: number;
  /** Whether the group's pace adapts (`LimitPolicy.adaptive`, a rule's `adaptive`). */
  readonly adaptive: boolean;
  /**
   * Share of its limits the group runs at now, in [adaptive floor, 1]: 1 for
   * a group that does not adapt, or has not been slowed down or has recovered.
   */
  readonly paceFactor: number;
  /**
   * The concurrency cap in force now (the configured one scaled by
   * `paceFactor`, or the implied ceiling of an adapting group without one);
   * `null` = unlimited.
   */
  readonly effectiveConcurrency: number | null;
  /**
   * Why the pace last changed: the signal of the last cut (`HTTP 503`,
   * `latency 412 ms over 150 ms (baseline 50 ms)`, `timeout`, `connection
   * error`), or `recovered after ...` once back at full pace; `null` if never cut.
   */
  readonly paceReason: string | null;
  /** When the pace was last cut, or came back to full; `null` if never cut. */
  readonly paceChangedAt: number | null;
  /** Times the pace was cut. */
  readonly paceCuts: number;
  /** Moving average of the latency to the response head (ms), as workers reported it; `null` before any. */
  readonly latencyMs: number | null;
  /** The lowest latency average seen (ms): what the average is judged against; `null` before any. */
  readonly baselineMs: number | null;
  /** Leases not yet released nor expired. */
  readonly inFlight: number;
  /** End of the current pause, or `null` when not paused. */
  readonly pausedUntil: number | null;
  /** Why it is paused (`Retry-After on 429`, `429 backoff, strike 2`, an admin's reason), or `null`. */
  readonly pauseReason: string | null;
  /** Consecutive 429 responses without a success since. */
  readonly strikes: number;
  /** Total admissions. */
  readonly admitted: number;
  /** Total denials. */
  readonly deferred: number;
  /**
   * Admissions given back because the worker could not start them on time
   * (a busy event loop); each one is a slot left unused rather than a start
   * that could crowd the next window. Many of them mean overloaded workers.
   */
  readonly lateStarts: number;
  /** Starts that went out late anyway (the process stalled after the check); each pushed the group's pacing back. */
  readonly slippedStarts: number;
  /**
   * Admitted requests that reached the socket (released with `sent`): with
   * every request of a crawl passing the gate, this equals what the group's
   * server was sent. A release with nothing else to report is counted with
   * its process's next admission of the group, or within two seconds (see
   * GroupLimiter.flush), so this may trail by that much.
   */
  readonly started: number;
  /** Planned start of the latest admission, or `null` if none yet. */
  readonly lastAdmitAt: number | null;
}

/** The crawl-wide cap on request starts (`LimitPolicy.globalRate`) and what it did. */
export interface GlobalStatus {
  /** The cap; `null` = none. */
  readonly rate: RateLimit | null;
  /** The spacing the gate enforces between any two starts of the crawl (ms); 0 = no cap. */
  readonly paceMs: number;
  /** Starts the cap admitted. */
  readonly admitted: number;
  /** Denials by the cap. */
  readonly deferred: number;
}
