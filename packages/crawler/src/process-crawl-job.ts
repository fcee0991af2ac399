import { extractPage, isHtml, type FieldRule } from '@crawlq/extractor';
import { FetchError, type Fetcher } from '@crawlq/fetcher';
import type { Frontier } from '@crawlq/frontier';
import type { CrawlJobData, CrawlJobResult } from '@crawlq/queue';
import type { RobotsPolicy } from '@crawlq/robots';
import type { ResultSink } from '@crawlq/sink';
import { DelayedError, type Job } from 'bullmq';
import { BlockedGroupError, DeferJobError, PermanentJobError, RedirectStopError } from './crawl-errors.js';
import { fetchThroughGate, type GatedFetchResult, type RedirectHop } from './gated-fetch.js';
import type { GroupGate } from './group-gate.js';
import type { PageRecord, SkippedRecord } from './page-record.js';

/** What a crawl job needs; one set per worker process. */
export interface CrawlJobContext {
  readonly gate: GroupGate;
  readonly fetcher: Fetcher;
  readonly frontier: Frontier;
  readonly sink: ResultSink;
  /** Longest wait for a group slot spent sleeping in-process instead of a BullMQ deferral. */
  readonly maxInlineWaitMs: number;
  /** A job whose group stays paused longer than this is dead-lettered. */
  readonly maxBlockedMs: number;
  /** Redirect hops per chain, across the jobs a chain is handed over to (--max-redirects). */
  readonly maxRedirects: number;
  readonly fields: readonly FieldRule[];
  /** Called once per written record (progress counters). */
  readonly onPage?: (record: PageRecord) => void;
  /** robots.txt for the fleet; absent with --ignore-robots. */
  readonly robots?: RobotsPolicy;
  /** Called with each group's robots.txt Crawl-delay (it slows the group's rate). */
  readonly onCrawlDelay?: (group: string, crawlDelayMs: number) => Promise<void>;
  /** Called once per URL skipped because robots.txt disallows it. */
  readonly onSkipped?: (record: SkippedRecord) => void;
  /** Called when the gate or a server's Retry-After defers the job (metrics). */
  readonly onDeferred?: (reason: 'rate' | 'concurrency' | 'paused') => void;
}

/**
 * One crawl job: wait for the group gate, fetch, parse, write the record,
 * send new links to the frontier. Throws DelayedError when the gate defers
 * the job (no attempt used), UnrecoverableError for permanent failures, and
 * the fetch error itself for retryable ones (BullMQ retries with backoff).
 *
 * Redirects: a hop within the job's group is checked (scope, robots.txt,
 * seen-set) and followed inline when the gate admits it within the inline
 * wait; a hop to another group, or one the gate holds back, is handed to the
 * frontier as a job of its own, so a job never waits on a second group's gate.
 */
export async function processCrawlJob(
  job: Job<CrawlJobData>,
  token: string | undefined,
  context: CrawlJobContext,
): Promise<CrawlJobResult> {
  const { group } = job.data;
  const hopsBefore = job.data.redirects ?? 0;
  let hops = 0;
  try {
    if (context.robots) {
      const skipped = await checkRobots(job, context.robots, context);
      if (skipped) return skipped;
    }
    const fetched = await fetchThroughGate(job.data.url, {
      gate: context.gate,
      fetcher: context.fetcher,
      groupOf: (url) => context.frontier.groupOf(url),
      maxInlineWaitMs: context.maxInlineWaitMs,
      maxRedirects: Math.max(0, context.maxRedirects - hopsBefore),
      onDenied: (denial, request) => {
        // A hop the gate holds back becomes its own job rather than
        // restarting this one (which would request the first URL again).
        if (request.kind === 'redirect') return Promise.reject(new RedirectStopError('redirect-queued', { target: request.url }));
        return Promise.reject(new DeferJobError(denial.retryInMs, denial.reason));
      },
      checkRedirect: async (hop) => {
        hops += 1;
        if (!(await context.frontier.inScope(hop.to))) throw new RedirectStopError('scope', { target: hop.to, status: hop.status });
        if (hop.group !== group) throw new RedirectStopError('redirect-queued', { target: hop.to, status: hop.status });
        if (context.robots) await checkRedirectRobots(hop, context.robots, context);
      },
      // Claimed only once admitted: a hop handed over instead is claimed by the frontier.
      beforeRedirectSent: async (hop) => {
        if (!(await context.frontier.claim(hop.to, job.id))) throw new RedirectStopError('redirect-to-seen', { target: hop.to, status: hop.status });
      },
    });
    return await recordPage(job, context, fetched);
  } catch (error) {
    try {
      if (error instanceof RedirectStopError) return await recordRedirectStop(job, context, { stop: error, redirects: hopsBefore + hops });
      throw error;
    } catch (final) {
      throw await translateError(final, { job, token, context });
    }
  }
}

/**
 * Disallowed: a skipped record, no fetch, no dead letter. Unreachable
 * robots.txt (5xx, network): treated as disallow-all for a while, so the job
 * is deferred, not failed (RFC 9309 2.3.1.4).
 */
async function checkRobots(job: Job<CrawlJobData>, robots: RobotsPolicy, context: CrawlJobContext): Promise<CrawlJobResult | undefined> {
  const verdict = await robots.check(job.data.url);
  if (verdict.crawlDelayMs !== null && verdict.crawlDelayMs > 0) await context.onCrawlDelay?.(job.data.group, verdict.crawlDelayMs);
  if (verdict.reason === 'unreachable') throw new DeferJobError(Math.max(1_000, verdict.retryAfterMs ?? 60_000), 'paused');
  if (verdict.allowed) return undefined;
  return recordSkipped(job, context, { skipped: 'robots', robotsUrl: verdict.robotsUrl });
}

/**
 * A hop's target is checked against its host's robots.txt before it is
 * requested. Disallowed: the job ends as a skipped record. Unreachable: the
 * hop is handed over, and its own job waits for the robots.txt.
 */
async function checkRedirectRobots(hop: RedirectHop, robots: RobotsPolicy, context: CrawlJobContext): Promise<void> {
  const verdict = await robots.check(hop.to);
  if (verdict.crawlDelayMs !== null && verdict.crawlDelayMs > 0) await context.onCrawlDelay?.(hop.group, verdict.crawlDelayMs);
  if (verdict.reason === 'unreachable') throw new RedirectStopError('redirect-queued', { target: hop.to, status: hop.status });
  if (!verdict.allowed) throw new RedirectStopError('robots', { target: hop.to, status: hop.status, robotsUrl: verdict.robotsUrl });
}

/** Ends a job at a redirect it did not follow: hand the target over, or record why not. */
async function recordRedirectStop(
  job: Job<CrawlJobData>,
  context: CrawlJobContext,
  { stop, redirects }: { stop: RedirectStopError; redirects: number },
): Promise<CrawlJobResult> {
  const redirect = { redirectTo: stop.target, ...(stop.status === undefined ? {} : { status: stop.status }) };
  switch (stop.reason) {
    case 'redirect-queued': {
      const handed = await context.frontier.enqueueRedirect(stop.target, { owner: String(job.id), depth: job.data.depth, redirects });
      // Its own URL again (a loop through the gate's denial): try the whole job later.
      if (handed === 'self') throw new DeferJobError(1_000, 'rate');
      return recordSkipped(job, context, { skipped: handed === 'queued' ? 'redirect-queued' : 'redirect-to-seen', ...redirect });
    }
    case 'robots':
      return recordSkipped(job, context, { skipped: 'robots', robotsUrl: stop.robotsUrl ?? '', ...redirect });
    case 'scope':
    case 'redirect-to-seen':
      return recordSkipped(job, context, { skipped: stop.reason, ...redirect });
  }
}

type SkipReason =
  | { skipped: 'robots'; robotsUrl: string; redirectTo?: string; status?: number }
  | { skipped: 'redirect-to-seen' | 'redirect-queued' | 'scope'; redirectTo: string; status?: number };

async function recordSkipped(job: Job<CrawlJobData>, context: CrawlJobContext, reason: SkipReason): Promise<CrawlJobResult> {
  const record: SkippedRecord = { url: job.data.url, depth: job.data.depth, group: job.data.group, decidedAt: new Date().toISOString(), ...reason };
  await context.sink.write(record);
  context.onSkipped?.(record);
  return { status: 0, links: 0, enqueued: 0 };
}

async function recordPage(
  job: Job<CrawlJobData>,
  context: CrawlJobContext,
  fetched: GatedFetchResult,
): Promise<CrawlJobResult> {
  const { response } = fetched;
  const parseStarted = performance.now();
  const page = isHtml(response.contentType) && response.status < 400
    ? extractPage({ body: response.body, contentType: response.contentType, url: response.finalUrl, fields: context.fields })
    : undefined;
  const parseMs = performance.now() - parseStarted;
  const added = page && page.followLinks.length > 0 ? await context.frontier.addDiscovered(page.followLinks, job.data.depth) : undefined;
  const record: PageRecord = {
    url: job.data.url,
    finalUrl: response.finalUrl,
    status: response.status,
    contentType: response.contentType ?? null,
    title: page?.title ?? null,
    description: page?.description ?? null,
    canonical: page?.canonical ?? null,
    lang: page?.lang ?? null,
    links: page?.links ?? [],
    depth: job.data.depth,
    group: job.data.group,
    requestedAt: new Date(fetched.requestedAt).toISOString(),
    fetchedAt: new Date().toISOString(),
    attempts: job.attemptsMade + 1,
    retries: response.retries,
    bytes: response.bodyBytes,
    timings: { waitMs: round(fetched.waitMs), fetchMs: round(response.fetchMs), parseMs: round(parseMs) },
    enqueued: added?.accepted ?? 0,
    ...(page && context.fields.length > 0 ? { fields: page.fields } : {}),
  };
  await context.sink.write(record);
  context.onPage?.(record);
  return { status: response.status, links: record.links.length, enqueued: record.enqueued };
}

/** Maps an error to what BullMQ should do with the job. */
async function translateError(
  error: unknown,
  { job, token, context }: { job: Job<CrawlJobData>; token: string | undefined; context: CrawlJobContext },
): Promise<Error> {
  const deferral = deferralOf(error);
  if (deferral) {
    context.onDeferred?.(deferral.reason);
    if (deferral.reason === 'paused') {
      const blockedSince = job.data.blockedSince ?? Date.now();
      const blockedForMs = Date.now() - blockedSince;
      if (blockedForMs > context.maxBlockedMs) {
        const blocked = new BlockedGroupError(job.data.group, blockedForMs);
        return new PermanentJobError(blocked.reason, blocked.message, { cause: blocked });
      }
      // updateData before moving, as BullMQ requires.
      if (job.data.blockedSince === undefined) await job.updateData({ ...job.data, blockedSince });
    }
    await job.moveToDelayed(Date.now() + deferral.retryInMs, token);
    return new DelayedError();
  }
  if (error instanceof FetchError && !error.retryable) {
    const reason = (error as { reason?: unknown }).reason;
    return new PermanentJobError(typeof reason === 'string' ? reason : 'permanent', error.message, { cause: error, status: statusOf(error) ?? null });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * A deferral from the gate, or a 429/503 whose Retry-After paused the group:
 * waiting out a server's "come back later" is not a failed attempt.
 */
function deferralOf(error: unknown): { retryInMs: number; reason: 'rate' | 'concurrency' | 'paused' } | undefined {
  if (error instanceof DeferJobError) return error;
  if (error instanceof FetchError && error.retryable) {
    const status = statusOf(error);
    const retryAfterMs = retryAfterOf(error);
    if ((status === 429 || status === 503) && retryAfterMs !== undefined) return { retryInMs: retryAfterMs, reason: 'paused' };
  }
  return undefined;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

function retryAfterOf(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof value === 'number' ? value : undefined;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
