import type { RequestRecord } from '@crawlq/demo-site';
import { ArrivalClock } from '@crawlq/testing';
import { afterAll } from 'vitest';

export { peakInFlight } from '@crawlq/demo-site';

export function byHost(requests: readonly RequestRecord[]): Map<string, RequestRecord[]> {
  const groups = new Map<string, RequestRecord[]>();
  for (const request of requests) {
    const list = groups.get(request.host) ?? [];
    list.push(request);
    groups.set(request.host, list);
  }
  return groups;
}

/**
 * Requests a zero-burst leaky bucket would reject, as nginx `limit_req` without
 * `burst` judges them: on a millisecond clock, a request less than `spacingMs`
 * (duration / max) after the last *accepted* one is rejected and does not count.
 */
export function leakyBucketRejections(starts: readonly number[], spacingMs: number): number {
  let lastAccepted = Number.NEGATIVE_INFINITY;
  let rejected = 0;
  for (const at of [...starts].map(Math.floor).sort((a, b) => a - b)) {
    if (at - lastAccepted < spacingMs) rejected += 1;
    else lastAccepted = at;
  }
  return rejected;
}

/**
 * An arrival clock for the sites a test file serves, running from now until
 * the file's tests are over. The sites stamp a request when this process's
 * loop gets to it, and a stall of the loop stamps it late: with this clock,
 * starts are counted in a window only where no stall can explain them
 * (`maxStampedInWindow`). Call it at the top of the file, before any site starts.
 */
export function sitesArrivalClock(): ArrivalClock {
  const clock = new ArrivalClock({ keepTicks: true });
  afterAll(() => clock.stop());
  return clock;
}
