/** Identifies one admitted request's concurrency slot; pass it to `release`. */
export interface Lease {
  readonly group: string;
  readonly leaseId: string;
  /**
   * When the gate admitted it (Redis-clock ms): adaptive pacing counts a
   * failure of a request admitted before the group's last cut as part of
   * that cut's episode. Unset: the lease's reserved start stands in.
   */
  readonly admittedAt?: number;
  /**
   * Its reserved start (Redis-clock ms; a retaken start's new one): release
   * reads the request's hold time from it without looking the lease up.
   * Unset: release reads it from Redis.
   */
  readonly startAt?: number;
  /**
   * The server whose level admitted this start too (see `AcquireRequest.address`):
   * a late start is paced again there as well as in its group.
   */
  readonly server?: string;
  /** How late its start may go at that server (a late start the group takes again needs no later start there within it). */
  readonly serverLateMs?: number;
  /**
   * The start also holds a slot of that server's concurrency cap (this shard's
   * share of it, as admitted): `confirmStart` checks it again, release gives it back.
   */
  readonly serverConcurrency?: number;
}

/**
 * Why a request may not start now: the group's rate, its concurrency cap, its
 * pause, the crawl-wide cap, or its server's rate or concurrency cap.
 */
export type DenialReason = 'rate' | 'concurrency' | 'paused' | 'global-rate' | 'server-rate' | 'server-concurrency';

/** The gate's answer to `acquire`. */
export type Admission =
  | {
      readonly admitted: true;
      /** Sleep this long, then start: a short pacing wait reserved at admission (0 = start now). */
      readonly startInMs: number;
      /** The reserved start in epoch ms on the Redis clock (for logs; act on `startInMs`). */
      readonly startAt: number;
      /**
       * The reserved start on this process's clock (`performance.now()`): sleep
       * until then. Earlier than "reply + startInMs" when the reply sat in a busy
       * event loop, so a slow loop does not push every start late.
       */
      readonly localStartAt: number;
      /**
       * The latest `performance.now()` at which the start may still go: half
       * the margin its pacing keeps (at most half the safety margin, at least
       * 5 ms). A later start could reach the server less than one spacing
       * before the next one, or crowd a window as the server counts it: past
       * this, give the slot back with `abandon` and ask again. Infinity when
       * no spacing applies to the start (no rate, Crawl-delay, crawl-wide cap
       * or server rate): lateness then crowds no one.
       */
      readonly startBy: number;
      /**
       * Call `confirmStart` just before starting: the start was reserved far
       * enough ahead that a pause may have begun, or, in a group with a
       * concurrency cap, before other reservations that may fill the cap.
       */
      readonly confirmBeforeStart: boolean;
      /**
       * The earliest the group's next start can be, on the Redis clock: this
       * start plus the group's spacing in force (and the grace taken), less
       * its burst. Absent when the group keeps no spacing of its own. A caller with
       * more starts of the group to make need not ask before then: asked
       * earlier, the gate would reserve that start ahead and want it confirmed.
       */
      readonly nextStartAt?: number;
      readonly lease: Lease;
    }
  | {
      readonly admitted: false;
      /** Try again after this long: a distinct slot on the group's wake horizon plus jitter. */
      readonly retryInMs: number;
      readonly reason: DenialReason;
      /** Remaining pause, when `reason` is `'paused'`. */
      readonly pausedForMs?: number;
    };

/** A late start `retakeLateStart` let go now: the same lease, a new start and deadline. */
export interface RetakenStart {
  /** The new start, Redis clock (epoch ms): now, when the script ran. */
  readonly startAt: number;
  /** The same on this process's clock (`performance.now()`). */
  readonly localStartAt: number;
  /** As `Admission.startBy`: past this, the start is late again. */
  readonly startBy: number;
}

/** `confirmStart`'s answer: go, or give up this start (the lease is already given back). */
export type StartCheck =
  | { readonly go: true }
  | {
      readonly go: false;
      readonly reason: 'paused' | 'concurrency' | 'server-concurrency';
      /** Try again after this long: the rest of the pause, or a wake slot on the group's horizon. */
      readonly retryInMs: number;
    };

/** The result of a request, used by `release` to pause a group that pushes back. */
export interface Outcome {
  /** HTTP status; omit when no response arrived (network error, timeout). */
  readonly status?: number;
  /** Parsed `Retry-After`, in ms. */
  readonly retryAfterMs?: number;
  /** The request reached the socket (a server may have seen it): counted in the group's `started`. */
  readonly sent?: boolean;
  /** Time from the request leaving to the response head arriving (ms): the latency adaptive pacing watches. */
  readonly latencyMs?: number;
  /** No response came: the request timed out, or the connection failed (both congestion signals). */
  readonly failure?: 'timeout' | 'network';
}

/** A change of a group's adaptive pace, as the release that made it reports it. */
export interface PaceChange {
  readonly group: string;
  /** `down`: a congestion signal halved the pace; `up`: back at full pace (reported once, by the first release after). */
  readonly direction: 'down' | 'up';
  /** Pace factor before and after (`up`: from the factor the last cut set, to 1). */
  readonly from: number;
  readonly to: number;
  /**
   * The signal's class, a short fixed list: `latency`, `5xx`, `429`,
   * `timeout`, `network` (for `up`: the class of the cut it recovered from).
   */
  readonly cause: string;
  /** The signal in words: `HTTP 503`, `latency 412 ms over 150 ms (baseline 50 ms)`. */
  readonly reason: string;
}

/**
 * The log line of a change to a group's adaptive pace: `group example.org:
 * pace cut to 0.50 of its limits (was 1.00): HTTP 503`, or `group
 * example.org: back at full pace (was cut to 0.25: HTTP 503)`.
 */
export function describePaceChange(change: PaceChange): string {
  if (change.direction === 'up') {
    return `group ${change.group}: back at full pace (was cut to ${change.from.toFixed(2)}${change.reason === '' ? '' : `: ${change.reason}`})`;
  }
  return `group ${change.group}: pace cut to ${change.to.toFixed(2)} of its limits (was ${change.from.toFixed(2)}): ${change.reason}`;
}
