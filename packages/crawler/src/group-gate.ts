import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DenialReason, GroupLimiter, Lease } from '@crawlq/group-limiter';

/** In-process sleeps for a group slot up to this long; longer waits become BullMQ deferrals. */
export const MAX_INLINE_WAIT_MS = 500;
/**
 * Planned jobs become due up to this long before their slot, a batch per
 * wake-up (see the limiter's `plan`); below MAX_INLINE_WAIT_MS so that the
 * gate admits an early job with a short sleep rather than deferring it again.
 */
export const PLAN_BATCH_WINDOW_MS = 400;
/** A busy process that misses its slot this often in a row hands the job back to the queue. */
const MAX_LATE_STARTS = 2;
const LATE_RETRY_MS = 200;

/** The gate let the request start (it holds `lease`), or says when to ask again. */
export type GateAnswer =
  | {
      readonly admitted: true;
      readonly lease: Lease;
      /** `performance.now()` past which the request counts as started late (see `reportSlipIfLate`). */
      readonly startBy: number;
    }
  | { readonly admitted: false; readonly retryInMs: number; readonly reason: DenialReason };

/**
 * Asks the group gate for one request start and waits out a short reserved
 * delay. Returns the lease only when the request may start at once: not
 * paused meanwhile, and not so late for its slot (a busy event loop) that it
 * could crowd the next window as the server counts it; a late slot is given
 * back unused and asked for again. Never leaks a lease: an abort or error
 * while waiting gives it back.
 */
export async function passGroupGate(
  limiter: Pick<GroupLimiter, 'acquire' | 'confirmStart' | 'abandon' | 'release'>,
  group: string,
  options: { readonly maxInlineWaitMs: number; readonly signal?: AbortSignal },
): Promise<GateAnswer> {
  for (let late = 0; late < MAX_LATE_STARTS; late += 1) {
    const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: options.maxInlineWaitMs });
    if (!admission.admitted) return { admitted: false, retryInMs: admission.retryInMs, reason: admission.reason };
    try {
      const waitMs = admission.localStartAt - performance.now();
      if (waitMs > 0) await sleep(waitMs, undefined, options.signal ? { signal: options.signal } : undefined);
      // A 429 seen by any worker while this start waited, or the concurrency
      // cap filled by earlier reservations, must stop it too.
      if (admission.confirmBeforeStart) {
        const check = await limiter.confirmStart(admission.lease);
        if (!check.go) return { admitted: false, retryInMs: check.retryInMs + Math.round(Math.random() * 100), reason: check.reason };
      }
    } catch (error) {
      await limiter.release(admission.lease).catch(() => undefined);
      throw error;
    }
    if (performance.now() <= admission.startBy) return { admitted: true, lease: admission.lease, startBy: admission.startBy };
    await limiter.abandon(admission.lease);
  }
  return { admitted: false, retryInMs: LATE_RETRY_MS + Math.round(Math.random() * LATE_RETRY_MS), reason: 'rate' };
}

/**
 * Call as the request goes out: if the process stalled between the gate's
 * check and the socket, the group's pacing moves back by the excess, so the
 * next starts are spaced from when this one really began. Fire and forget:
 * a failed report only loses that correction.
 */
export function reportSlipIfLate(limiter: Pick<GroupLimiter, 'reportSlip'>, group: string, startBy: number): void {
  const lateMs = performance.now() - startBy;
  if (lateMs > 0) limiter.reportSlip(group, lateMs).catch(() => undefined);
}
