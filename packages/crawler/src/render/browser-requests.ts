import { setTimeout as sleep } from 'node:timers/promises';
import { FetchError, type Fetcher } from '@crawlq/fetcher';
import type { Frontier } from '@crawlq/frontier';
import type { BrowserRequest, BrowserRequestPage, SubrequestAnswer } from '@crawlq/renderer';
import { RobotsFetchPostponedError, type RobotsPolicy } from '@crawlq/robots';
import { NotAdmittedInTime, RequestBlocked } from '../errors.js';
import { fetchThroughGate } from '../gate/gated-fetch.js';
import type { GroupGate } from '../gate/group-gate.js';

/** What a rendering browser's requests need from the worker: the same parts a page fetch uses. */
export interface BrowserRequestServices {
  readonly gate: GroupGate;
  readonly fetcher: Fetcher;
  readonly frontier: Pick<Frontier, 'groupOf' | 'inScope'>;
  readonly robots?: RobotsPolicy;
  readonly onCrawlDelay?: (group: string, crawlDelayMs: number) => Promise<void>;
  /** The worker's stop signal (a stop past the grace period ends the waits). */
  readonly signal?: AbortSignal;
}

/** Longest in-process wait for one gate answer; the request's whole wait is bounded by its page's render time. */
const MAX_GATE_WAIT_MS = 2_000;

/**
 * Makes one request a rendering browser asked for, as crawlq makes any
 * request: robots.txt of its host first (a disallowed path is blocked; an
 * unreachable robots.txt defers it), scope for a frame's document, then
 * through the group gate of the host it goes to (rate, concurrency, pause,
 * Crawl-delay) with the fetcher's SSRF guard, body cap and timeouts; each of
 * got's retries and each redirect hop takes its own admission. A request the
 * gate does not admit before `deadline` is not made (`deferred`): a browser
 * never makes a host wait past its limits. `admitted` is called once the
 * first request is admitted: until then the page's time stands still.
 */
export async function fetchForBrowser(
  request: BrowserRequest,
  { services, deadline, signal, admitted }: { services: BrowserRequestServices } & BrowserRequestPage,
): Promise<SubrequestAnswer> {
  const { url } = request;
  const signals = services.signal ? AbortSignal.any([signal, services.signal]) : signal;
  let made = false;
  try {
    await checkRobots(url, services);
    if (request.navigation && !(await services.frontier.inScope(url))) throw new RequestBlocked('a frame outside the crawl scope');
    const fetched = await fetchThroughGate(url, {
      gate: services.gate,
      fetcher: services.fetcher,
      groupOf: (target) => services.frontier.groupOf(target),
      maxInlineWaitMs: Math.max(0, Math.min(MAX_GATE_WAIT_MS, deadline - performance.now())),
      signal: signals,
      onDenied: async (denial) => {
        if (performance.now() + denial.retryInMs >= deadline) throw new NotAdmittedInTime(`not admitted in time (${denial.reason}, next chance in ${Math.round(denial.retryInMs)} ms, ${Math.round(deadline - performance.now())} ms left)`);
        await sleep(denial.retryInMs, undefined, { signal: signals });
      },
      checkRedirect: async (hop) => checkRobots(hop.to, services),
      onFirstAdmitted: () => {
        made = true;
        admitted();
        return Promise.resolve();
      },
    });
    const { response } = fetched;
    return { fate: 'made', status: response.status, headers: stringHeaders(response.headers), body: response.body };
  } catch (error) {
    if (error instanceof NotAdmittedInTime) return { fate: 'deferred', why: error.message };
    if (error instanceof RequestBlocked) return { fate: 'blocked', why: error.message };
    if (error instanceof FetchError && !error.retryable) return { fate: 'blocked', why: error.failureReason ?? error.message };
    if (signal.aborted) return made ? { fate: 'failed', why: 'no response before the page was done' } : { fate: 'deferred', why: 'the page was done before it was admitted' };
    return { fate: 'failed', why: error instanceof Error ? error.message : String(error) };
  }
}

async function checkRobots(url: string, services: BrowserRequestServices): Promise<void> {
  if (!services.robots) return;
  let verdict;
  try {
    verdict = await services.robots.check(url);
  } catch (error) {
    if (error instanceof RobotsFetchPostponedError) throw new NotAdmittedInTime('its host is paused');
    throw error;
  }
  if (verdict.crawlDelayMs !== null && verdict.crawlDelayMs > 0) await services.onCrawlDelay?.(services.frontier.groupOf(url), verdict.crawlDelayMs);
  if (verdict.reason === 'unreachable' || verdict.reason === 'gave-up') throw new NotAdmittedInTime('robots.txt unreachable');
  if (!verdict.allowed) throw new RequestBlocked('disallowed by robots.txt');
}

function stringHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
