import { setTimeout as sleep } from 'node:timers/promises';
import type { Fetcher, FetchRequest, FetchResult } from '@crawlq/fetcher';
import { GroupPausedError } from '../errors.js';
import { fetchThroughGate, openThroughGate, type GatedFetchOptions, type GatedStreamResult } from './gated-fetch.js';
import type { GroupGate } from './group-gate.js';

/** Longest single sleep while the group gate holds a one-off fetch back. */
const MAX_GATE_SLEEP_MS = 5_000;

/**
 * A one-off fetch outside the job flow (robots.txt, a sitemap) that still is
 * a request to the host like any other: it and each of its retries and
 * redirect hops wait for their group's gate in-process and count toward the
 * group's rate.
 */
export type GatedFetch = (url: string, request?: GatedFetchRequest) => Promise<FetchResult>;

/** Per-fetch options a one-off fetch may pass on (robots.txt: 5 redirects, a body prefix). */
export type GatedFetchRequest = Pick<FetchRequest, 'signal' | 'maxRedirects' | 'bodyPrefixBytes'> & {
  /** Throw `GroupPausedError` instead of sleeping through a pause (a job can be deferred instead). */
  readonly postponeWhenPaused?: boolean;
};

export function createGatedFetch(options: OneOffGateOptions): GatedFetch {
  return async (url, request = {}) => {
    const { response } = await fetchThroughGate(url, oneOffOptions(options, request));
    return response;
  };
}

/** A one-off fetch like {@link GatedFetch} whose body streams (a sitemap); see {@link openThroughGate}. */
export type GatedStream = (url: string, request?: Omit<GatedFetchRequest, 'bodyPrefixBytes'>) => Promise<GatedStreamResult>;

export function createGatedStream(options: OneOffGateOptions): GatedStream {
  return (url, request = {}) => openThroughGate(url, oneOffOptions(options, request));
}

/** What a one-off fetch needs: the gate, the fetcher, and how a URL maps to its group. */
export interface OneOffGateOptions {
  readonly gate: GroupGate;
  readonly fetcher: Fetcher;
  readonly groupOf: (url: string) => string;
}

/** A one-off fetch sleeps through denials in-process (or is postponed while its group is paused). */
function oneOffOptions(options: OneOffGateOptions, request: GatedFetchRequest): GatedFetchOptions {
  const { postponeWhenPaused, signal, maxRedirects, bodyPrefixBytes } = request;
  return {
    ...options,
    maxInlineWaitMs: MAX_GATE_SLEEP_MS,
    // Static files: their errors count for the group's pace, their latency does not.
    reportLatency: false,
    signal,
    maxRedirects,
    bodyPrefixBytes,
    onDenied: async (denial, gated) => {
      if (denial.reason === 'paused' && postponeWhenPaused === true) throw new GroupPausedError(gated.group, denial.retryInMs);
      await sleep(Math.min(denial.retryInMs, MAX_GATE_SLEEP_MS), undefined, { signal });
    },
  };
}
