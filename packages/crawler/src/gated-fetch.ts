import { setTimeout as sleep } from 'node:timers/promises';
import type { Fetcher, FetchRequest, FetchResult } from '@crawlq/fetcher';
import type { GroupLimiter } from '@crawlq/group-limiter';
import { GroupPausedError } from './crawl-errors.js';
import { passGroupGate } from './group-gate.js';

/** Longest single sleep while the group gate holds a one-off fetch back. */
const MAX_GATE_SLEEP_MS = 5_000;

/**
 * A one-off fetch outside the job flow (robots.txt, a sitemap) that still is
 * a request to the host like any other: it waits for the group gate (rate,
 * concurrency, pause) in-process and counts toward the group's rate.
 */
export type GatedFetch = (url: string, request?: GatedFetchRequest) => Promise<FetchResult>;

/** Per-fetch options a one-off fetch may pass on (robots.txt: 5 redirects, a body prefix). */
export type GatedFetchRequest = Pick<FetchRequest, 'signal' | 'maxRedirects' | 'bodyPrefixBytes'> & {
  /** Throw `GroupPausedError` instead of sleeping through a pause (a job can be deferred instead). */
  readonly postponeWhenPaused?: boolean;
};

export function createGatedFetch(options: { limiter: GroupLimiter; fetcher: Fetcher; groupOf: (url: string) => string }): GatedFetch {
  const { limiter, fetcher, groupOf } = options;
  return async (url, request = {}) => {
    const { postponeWhenPaused, ...fetchRequest } = request;
    const { signal } = fetchRequest;
    const group = groupOf(url);
    for (;;) {
      const answer = await passGroupGate(limiter, group, { maxInlineWaitMs: MAX_GATE_SLEEP_MS, ...(signal ? { signal } : {}) });
      if (!answer.admitted) {
        if (answer.reason === 'paused' && postponeWhenPaused === true) throw new GroupPausedError(group, answer.retryInMs);
        await sleep(Math.min(answer.retryInMs, MAX_GATE_SLEEP_MS), undefined, { signal });
        continue;
      }
      let outcome: { status?: number; retryAfterMs?: number } = {};
      try {
        const response = await fetcher.fetch(url, fetchRequest);
        outcome = { status: response.status };
        return response;
      } catch (error) {
        // A 429/503 with Retry-After pauses the group as a page's would.
        const { status, retryAfterMs } = error as { status?: unknown; retryAfterMs?: unknown };
        outcome = {
          ...(typeof status === 'number' ? { status } : {}),
          ...(typeof retryAfterMs === 'number' ? { retryAfterMs } : {}),
        };
        throw error;
      } finally {
        await limiter.release(answer.lease, outcome).catch(() => undefined);
      }
    }
  };
}
