import { setTimeout as sleep } from 'node:timers/promises';
import type { Fetcher, FetchResult } from '@crawlq/fetcher';
import type { GroupLimiter } from '@crawlq/group-limiter';
import { passGroupGate } from './group-gate.js';

/** Longest single sleep while the group gate holds a one-off fetch back. */
const MAX_GATE_SLEEP_MS = 5_000;

/**
 * A one-off fetch outside the job flow (robots.txt, a sitemap) that still is
 * a request to the host like any other: it waits for the group gate (rate,
 * concurrency, pause) in-process and counts toward the group's rate.
 */
export type GatedFetch = (url: string, signal?: AbortSignal) => Promise<FetchResult>;

export function createGatedFetch(options: { limiter: GroupLimiter; fetcher: Fetcher; groupOf: (url: string) => string }): GatedFetch {
  const { limiter, fetcher, groupOf } = options;
  return async (url, signal) => {
    const group = groupOf(url);
    for (;;) {
      const answer = await passGroupGate(limiter, group, { maxInlineWaitMs: MAX_GATE_SLEEP_MS, ...(signal ? { signal } : {}) });
      if (!answer.admitted) {
        await sleep(Math.min(answer.retryInMs, MAX_GATE_SLEEP_MS), undefined, { signal });
        continue;
      }
      let status: number | undefined;
      try {
        const response = await fetcher.fetch(url, signal ? { signal } : {});
        status = response.status;
        return response;
      } catch (error) {
        const failed = (error as { status?: unknown }).status;
        status = typeof failed === 'number' ? failed : undefined;
        throw error;
      } finally {
        await limiter.release(answer.lease, status === undefined ? {} : { status }).catch(() => undefined);
      }
    }
  };
}
