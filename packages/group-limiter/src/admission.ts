/** Identifies one admitted request's concurrency slot; pass it to `release`. */
export interface Lease {
  readonly group: string;
  readonly leaseId: string;
}

/** Why a request may not start now. */
export type DenialReason = 'rate' | 'concurrency' | 'paused';

/** The gate's answer to `acquire`. */
export type Admission =
  | {
      readonly admitted: true;
      /** Sleep this long, then start: a short pacing wait reserved at admission (0 = start now). */
      readonly startInMs: number;
      /** The reserved start in epoch ms on the Redis clock (for logs; act on `startInMs`). */
      readonly startAt: number;
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

/** The result of a request, used by `release` to pause a group that pushes back. */
export interface Outcome {
  /** HTTP status; omit when no response arrived (network error, timeout). */
  readonly status?: number;
  /** Parsed `Retry-After`, in ms. */
  readonly retryAfterMs?: number;
}
