import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PermanentFetchError, type Fetcher } from '@crawlq/fetcher';
import type { GroupLimiter } from '@crawlq/group-limiter';
import type { FetchRobots } from '@crawlq/robots';
import { groupKeyOf, type GroupBy } from '@crawlq/urls';

/** Longest single sleep while the group gate holds a robots.txt fetch back. */
const MAX_GATE_SLEEP_MS = 5_000;

/**
 * robots.txt fetches are requests to the host like any other: they pass the
 * group gate (rate, concurrency, pause) and count toward the group's rate.
 */
export function gatedRobotsFetch(options: { limiter: GroupLimiter; fetcher: Fetcher; groupBy: GroupBy }): FetchRobots {
  const { limiter, fetcher, groupBy } = options;
  return async (robotsUrl, { signal }) => {
    const group = groupKeyOf(robotsUrl, groupBy);
    for (;;) {
      const admission = await limiter.acquire({ group, leaseId: randomUUID(), maxInlineWaitMs: MAX_GATE_SLEEP_MS });
      if (!admission.admitted) {
        await sleep(Math.min(admission.retryInMs, MAX_GATE_SLEEP_MS), undefined, { signal });
        continue;
      }
      if (admission.startInMs > 0) await sleep(admission.startInMs, undefined, { signal });
      let status: number | undefined;
      try {
        const response = await fetcher.fetch(robotsUrl, { signal });
        status = response.status;
        return { status: response.status, body: response.body, finalUrl: response.finalUrl };
      } catch (error) {
        // The host itself is refused (SSRF policy): its pages will be refused
        // too, permanently and visibly; answer "no robots.txt" so they get
        // that verdict instead of waiting on an unreachable robots.txt.
        if (error instanceof PermanentFetchError) return { status: 404, body: new Uint8Array(), finalUrl: robotsUrl };
        const failed = (error as { status?: unknown }).status;
        status = typeof failed === 'number' ? failed : undefined;
        throw error;
      } finally {
        await limiter.release(admission.lease, status === undefined ? {} : { status }).catch(() => undefined);
      }
    }
  };
}
