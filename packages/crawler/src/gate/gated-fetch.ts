import { noResponseFailure, RetryableFetchError, type AttemptHooks, type Fetcher, type FetchResult, type RedirectInfo, type StreamedFetchResult } from '@crawlq/fetcher';
import { failureReasonOfCode } from '@crawlq/errors';
import { redactUrl } from '@crawlq/urls';
import { ServerLookupError } from '../errors.js';
import type { GateDenial, GateLease, GroupGate, PassOptions, RequestOutcome } from './group-gate.js';

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

/**
 * How one fetch meets the group gate. Its first request asks the gate as
 * `PassOptions` say (the job's slot and lag, its progress, its wait for the
 * slot); the signal ends the whole fetch.
 */
export interface GatedFetchOptions extends Pick<PassOptions, 'signal' | 'due' | 'lag' | 'progress' | 'maxDueWaitMs' | 'dueWaitSignal' | 'idle'> {
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
  /** Redirects this fetch may follow (see `FetchRequest.maxRedirects`). */
  readonly maxRedirects?: number | undefined;
  /** Read only this many bytes of the body (see `FetchRequest.bodyPrefixBytes`). */
  readonly bodyPrefixBytes?: number | undefined;
  /** Keep the final request and response as sent and received (for WARC). */
  readonly captureExchange?: boolean;
  /** Extra request headers for the page's requests (a crawler's `beforeRequest` hook, a revisit's validators). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Report each response's latency to the gate (adaptive pacing judges a
   * group's pages by it). Off for static files fetched on the side (robots.txt,
   * sitemaps): a fast one would set a baseline the pages never meet.
   * @default true
   */
  readonly reportLatency?: boolean;
}

/** A gated fetch's response, with the time spent waiting for the gate. */
export interface GatedFetchResult {
  readonly response: FetchResult;
  /** Waiting for group slots, over every request of the fetch. */
  readonly waitMs: number;
  /** Epoch ms at which the request that got the response went out. */
  readonly requestedAt: number;
}

/** The requests of one fetch meeting the gate: at most one lease held at a time. */
interface GateSession {
  /** Waits until the gate admits `request`; the lease is then held. */
  start(request: GatedRequest): Promise<void>;
  /** Releases the held lease (if any) with `outcome`; never throws. */
  end(outcome: RequestOutcome): Promise<void>;
  /** The fetch settled: releases the held lease like `end`, and any slot a hook is given later goes straight back. */
  finish(outcome: RequestOutcome): Promise<void>;
  /** got's retries and redirect hops: each gives back the lease it held and waits for its own. */
  readonly hooks: AttemptHooks;
  readonly waitMs: () => number;
  readonly requestedAt: () => number | undefined;
}

function openGateSession(options: GatedFetchOptions): GateSession {
  const { gate, groupOf, signal } = options;
  // The job's own slot and progress belong to its URL's first request, not to a retry or a redirect hop.
  const firstRequest: PassOptions = { maxInlineWaitMs: options.maxInlineWaitMs, signal, due: options.due, lag: options.lag, progress: options.progress, maxDueWaitMs: options.maxDueWaitMs, dueWaitSignal: options.dueWaitSignal, idle: options.idle };
  const laterRequest: PassOptions = { maxInlineWaitMs: options.maxInlineWaitMs, signal };
  let lease: GateLease | undefined;
  // The request the held lease admitted (asked for again when its start went late).
  let admittedFor: GatedRequest | undefined;
  let waitMs = 0;
  let requestedAt: number | undefined;
  // Set once the fetch settled. An abort rejects it while a retry or redirect
  // hook may still be waiting at the gate: a slot that hook is given later has
  // no one left to release it.
  let over = false;
  const end = async (outcome: RequestOutcome): Promise<void> => {
    const held = lease;
    lease = undefined;
    if (held?.sentAt !== undefined) requestedAt = held.sentAt;
    await held?.release(outcome);
  };
  const start = async (request: GatedRequest, again = false): Promise<void> => {
    const before = performance.now();
    try {
      for (;;) {
        if (over) throw fetchEnded(request);
        signal?.throwIfAborted();
        // Asked again, a first request is no longer at the job's slot, nor does it record the job's progress twice.
        const passOptions = request.kind === 'first' && !again ? firstRequest : laterRequest;
        const answer = await gate.pass(request.group, { ...passOptions, host: hostOf(request.url) }).catch((error: unknown) => {
          throw error instanceof ServerLookupError ? lookupFailure(request.url, error) : error;
        });
        if (answer.admitted) {
          if (over) {
            await answer.lease.release();
            throw fetchEnded(request);
          }
          lease = answer.lease;
          admittedFor = request;
          if (request.kind === 'first' && !again) await options.onFirstAdmitted?.();
          return;
        }
        await options.onDenied(answer, request);
      }
    } finally {
      waitMs += performance.now() - before;
    }
  };
  const hooks: AttemptHooks = {
    beforeRetry: async (info) => {
      await end({ status: info.status, retryAfterMs: info.retryAfterMs, failure: info.failure });
      await start({ url: info.url, group: groupOf(info.url), kind: 'retry' });
    },
    beforeRedirect: async (info) => {
      await end({ status: info.status });
      const hop: RedirectHop = { ...info, group: groupOf(info.to) };
      await options.checkRedirect?.(hop);
      await start({ url: hop.to, group: hop.group, kind: 'redirect' });
      await options.beforeRedirectSent?.(hop);
    },
    // A start that went late since its admission is retaken or asked for again
    // here, as close to the socket as the fetcher lets it be checked.
    beforeSend: async () => {
      while (lease !== undefined && admittedFor !== undefined && !(await lease.keepIfOnTime())) {
        lease = undefined;
        await start(admittedFor, true);
      }
    },
    onRequestSent: () => lease?.markSent(),
    ...(options.reportLatency === false ? {} : { onResponseHead: () => lease?.markResponseHead() }),
  };
  const finish = (outcome: RequestOutcome): Promise<void> => {
    over = true;
    return end(outcome);
  };
  return { start, end, finish, hooks, waitMs: () => waitMs, requestedAt: () => requestedAt };
}

/** A URL's host name (the server gate resolves it); undefined for text that is no URL (the fetch fails on it). */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/**
 * A host whose lookup has failed past the gate's grace: the request fails as
 * a fetch whose own lookup failed would (retryable, a `timeout` or `network`
 * failure), without having gone out.
 */
function lookupFailure(url: string, error: ServerLookupError): RetryableFetchError {
  return new RetryableFetchError({
    url,
    code: error.code,
    retries: 0,
    reason: failureReasonOfCode(error.code) === 'timeout' ? 'timeout' : 'network',
    detail: `DNS lookup of ${error.host} failing for ${Math.round(error.failingForMs / 1000)} s; not sent, as no server could count it`,
    cause: error,
  });
}

/** What a retry or redirect hook still at the gate throws once its fetch is over (nobody awaits it). */
function fetchEnded(request: GatedRequest): Error {
  return new Error(`the fetch ended before its ${request.kind} request to ${redactUrl(request.url)} was admitted`);
}

/**
 * Fetches `url` with every request it makes passing the gate of the group it
 * goes to: the first request, each of got's retries and each redirect hop
 * takes a lease of its own, and the previous one is released (with its
 * response's outcome) before the next is asked for. Whatever happens, the
 * last lease is released exactly once before this returns or throws.
 */
export async function fetchThroughGate(url: string, options: GatedFetchOptions): Promise<GatedFetchResult> {
  const { fetcher, groupOf, signal } = options;
  const session = openGateSession(options);
  try {
    await session.start({ url, group: groupOf(url), kind: 'first' });
    const response = await fetcher.fetch(url, {
      ...(signal ? { signal } : {}),
      ...(options.maxRedirects === undefined ? {} : { maxRedirects: options.maxRedirects }),
      ...(options.bodyPrefixBytes === undefined ? {} : { bodyPrefixBytes: options.bodyPrefixBytes }),
      ...(options.captureExchange === true ? { captureExchange: true } : {}),
      ...(options.headers === undefined ? {} : { headers: options.headers }),
      attemptHooks: session.hooks,
    });
    await session.finish({ status: response.status });
    return { response, waitMs: session.waitMs(), requestedAt: session.requestedAt() ?? Date.now() };
  } catch (error) {
    await session.finish(outcomeOfError(error));
    throw error;
  }
}

/** A gated fetch whose body is still arriving. */
export interface GatedStreamResult {
  readonly response: StreamedFetchResult;
  /** Waiting for group slots, over every request of the fetch. */
  readonly waitMs: number;
  /** Settles (never rejects) once the body has closed and its group slot has been given back. */
  readonly released: Promise<void>;
}

/**
 * Like {@link fetchThroughGate}, but resolves with the body still streaming
 * (`Fetcher.stream`), and the last lease is held until the body closes: the
 * server is busy sending it until then, so the group's concurrency counts it.
 * The body closes however reading ends (its end, an error, the size cap, the
 * consumer's `destroy()`, an abort), and the lease is released then, once.
 * A consumer must read the body to its end or destroy it.
 */
export async function openThroughGate(url: string, options: GatedFetchOptions): Promise<GatedStreamResult> {
  const { fetcher, groupOf, signal } = options;
  const session = openGateSession(options);
  let response: StreamedFetchResult;
  try {
    await session.start({ url, group: groupOf(url), kind: 'first' });
    response = await fetcher.stream(url, {
      ...(signal ? { signal } : {}),
      ...(options.maxRedirects === undefined ? {} : { maxRedirects: options.maxRedirects }),
      attemptHooks: session.hooks,
    });
  } catch (error) {
    await session.finish(outcomeOfError(error));
    throw error;
  }
  const { body, status } = response;
  const released = new Promise<void>((resolve) => {
    const release = (): void => void session.finish({ status }).then(resolve);
    if (body.closed) release();
    else body.once('close', release);
  });
  return { response, waitMs: session.waitMs(), released };
}

/** The outcome a failed fetch reports: its last status and Retry-After when it had a response, else whether it timed out or could not connect. */
function outcomeOfError(error: unknown): RequestOutcome {
  const { status, retryAfterMs } = (error ?? {}) as { status?: unknown; retryAfterMs?: unknown };
  const failure = noResponseFailure(error);
  return {
    ...(typeof status === 'number' ? { status } : {}),
    ...(typeof retryAfterMs === 'number' ? { retryAfterMs } : {}),
    ...(failure === undefined ? {} : { failure }),
  };
}
