/**
 * A job's lock check that asks Redis at most once a quarter lock period while
 * it keeps answering yes: a check that held the lock pushed its expiry a whole
 * period on, so for a quarter of it the lock is surely still this worker's
 * (only a lock that ran out lets another worker take the job). A job of
 * several URLs then pays one check, not one per record.
 *
 * `takenAt` (performance.now()): when BullMQ took the job, which set its lock
 * for a whole period as a check does. A job whose records all come within a
 * quarter period of that asks Redis nothing (a round trip and two commands a
 * job, where most jobs take well under a second); one whose process stalled
 * longer than that is checked before its first record.
 */
export function recentlyHeld(hold: () => Promise<boolean>, lockDurationMs: number, takenAt = Number.NEGATIVE_INFINITY): () => Promise<boolean> {
  let heldAt = takenAt;
  return async () => {
    const askedAt = performance.now();
    if (askedAt - heldAt < lockDurationMs / 4) return true;
    const held = await hold();
    // Timed from the ask: the expiry was pushed later than that.
    heldAt = held ? askedAt : Number.NEGATIVE_INFINITY;
    return held;
  };
}
