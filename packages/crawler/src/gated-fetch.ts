import { setTimeout as sleep } from 'node:timers/promises';
import type { Fetcher, FetchRequest, FetchResult, RedirectInfo } from '@crawlq/fetcher';
import { redactUrl } from '@crawlq/urls';
import { GroupPausedError } from './crawl-errors.js';
import type { GateDenial, GateLease, GroupGate, RequestOutcome } from './group-gate.js';

/** Longest single sleep while the group gate holds a one-off fetch back. */
const MAX_GATE_SLEEP_MS = 5_000;

/** One request a gated fetch is about to make. */
export interface GatedRequest {
  readonly url: string;
  readonly group: string;
  readonly kind: 'first' | 'retry' | 'redirect';
}

/** A redirect hop about to be requested, with the group it goes to. */
export interface RedirectHop extends RedirectInfo {
  readonly group: string;
}

/** How one fetch meets the group gate. */
export interface GatedFetchOptions {
  readonly gate: GroupGate;
  readonly fetcher: Fetcher;
  readonly groupOf: (url: string) => string;
  /** Longest in-process wait for a reserved start. */
  readonly maxInlineWaitMs: number;
  /**
   * The gate did not admit `request` within the inline wait. Throw to stop
   * (the fetch rejects with that error); resolve to ask the gate again.
   */
  readonly onDenied: (denial: GateDenial, request: GatedRequest) => Promise<void>;
  /** Before a hop asks the gate, with no slot held (it may fetch robots.txt): throw to stop. */
  readonly checkRedirect?: (hop: RedirectHop) => Promise<void>;
  /** After a hop was admitted, just before it is sent: throw to stop (its slot goes back unused). */
  readonly beforeRedirectSent?: (hop: RedirectHop) => Promise<void>;
  /** Once, when the fetch's first request was admitted. */
  readonly onFirstAdmitted?: () => Promise<void>;
  readonly signal?: AbortSignal | undefined;
  /** Redirects this fetch may follow (see `FetchRequest.maxRedirects`). */
  readonly maxRedirects?: number | undefined;
  /** Read only this many bytes of the body (see `FetchRequest.bodyPrefixBytes`). */
  readonly bodyPrefixBytes?: number | undefined;
  /** Keep the final request and response as sent and received (for WARC). */
  readonly captureExchange?: boolean;
}

/** A gated fetch's response, with the time spent waiting for the gate. */
export interface GatedFetchResult {
  readonly response: FetchResult;
  /** Waiting for group slots, over every request of the fetch. */
  readonly waitMs: number;
  /** Epoch ms at which the request that got the response went out. */
  readonly requestedAt: number;
}

/**
 * Fetches `url` with every request it makes passing the gate of the group it
 * goes to: the first request, each of got's retries and each redirect hop
 * takes a lease of its own, and the previous one is released (with its
 * response's outcome) before the next is asked for. Whatever happens, the
 * last lease is released exactly once before this returns or throws.
 */
export async function fetchThroughGate(url: string, options: GatedFetchOptions): Promise<GatedFetchResult> {
  const { gate, fetcher, groupOf, signal } = options;
  let lease: GateLease | undefined;
  let waitMs = 0;
  let requestedAt: number | undefined;
  // Set once fetch() settled. An abort rejects it while a retry or redirect
  // hook may still be waiting at the gate: a slot that hook is given later has
  // no one left to release it (#10).
  let over = false;
  const end = async (outcome: RequestOutcome): Promise<void> => {
    const held = lease;
    lease = undefined;
    if (held?.sentAt !== undefined) requestedAt = held.sentAt;
    await held?.release(outcome);
  };
  const start = async (request: GatedRequest): Promise<void> => {
    const before = performance.now();
    try {
      for (;;) {
        if (over) throw fetchEnded(request);
        signal?.throwIfAborted();
        const answer = await gate.pass(request.group, { maxInlineWaitMs: options.maxInlineWaitMs, signal });
        if (answer.admitted) {
          if (over) {
            await answer.lease.release();
            throw fetchEnded(request);
          }
          lease = answer.lease;
          if (request.kind === 'first') await options.onFirstAdmitted?.();
          return;
        }
        await options.onDenied(answer, request);
      }
    } finally {
      waitMs += performance.now() - before;
    }
  };

  try {
    await start({ url, group: groupOf(url), kind: 'first' });
    const response = await fetcher.fetch(url, {
      ...(signal ? { signal } : {}),
      ...(options.maxRedirects === undefined ? {} : { maxRedirects: options.maxRedirects }),
      ...(options.bodyPrefixBytes === undefined ? {} : { bodyPrefixBytes: options.bodyPrefixBytes }),
      ...(options.captureExchange === true ? { captureExchange: true } : {}),
      attemptHooks: {
        beforeRetry: async (info) => {
          await end({ status: info.status, retryAfterMs: info.retryAfterMs });
          await start({ url: info.url, group: groupOf(info.url), kind: 'retry' });
        },
        beforeRedirect: async (info) => {
          await end({ status: info.status });
          const hop: RedirectHop = { ...info, group: groupOf(info.to) };
          await options.checkRedirect?.(hop);
          await start({ url: hop.to, group: hop.group, kind: 'redirect' });
          await options.beforeRedirectSent?.(hop);
        },
        onRequestSent: () => lease?.markSent(),
      },
    });
    over = true;
    await end({ status: response.status });
    return { response, waitMs, requestedAt: requestedAt ?? Date.now() };
  } catch (error) {
    over = true;
    await end(outcomeOfError(error));
    throw error;
  }
}

/** What a retry or redirect hook still at the gate throws once its fetch is over (nobody awaits it). */
function fetchEnded(request: GatedRequest): Error {
  return new Error(`the fetch ended before its ${request.kind} request to ${redactUrl(request.url)} was admitted`);
}

/** The outcome a failed fetch reports: its last status and Retry-After, when it had a response. */
function outcomeOfError(error: unknown): RequestOutcome {
  const { status, retryAfterMs } = (error ?? {}) as { status?: unknown; retryAfterMs?: unknown };
  return {
    ...(typeof status === 'number' ? { status } : {}),
    ...(typeof retryAfterMs === 'number' ? { retryAfterMs } : {}),
  };
}

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

export function createGatedFetch(options: { gate: GroupGate; fetcher: Fetcher; groupOf: (url: string) => string }): GatedFetch {
  return async (url, request = {}) => {
    const { postponeWhenPaused, signal, maxRedirects, bodyPrefixBytes } = request;
    const { response } = await fetchThroughGate(url, {
      ...options,
      maxInlineWaitMs: MAX_GATE_SLEEP_MS,
      signal,
      maxRedirects,
      bodyPrefixBytes,
      onDenied: async (denial, gated) => {
        if (denial.reason === 'paused' && postponeWhenPaused === true) throw new GroupPausedError(gated.group, denial.retryInMs);
        await sleep(Math.min(denial.retryInMs, MAX_GATE_SLEEP_MS), undefined, { signal });
      },
    });
    return response;
  };
}
