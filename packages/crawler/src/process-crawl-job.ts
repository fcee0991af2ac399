import type { FieldRule } from '@crawlq/extractor';
import { FetchError, type Fetcher } from '@crawlq/fetcher';
import type { Frontier } from '@crawlq/frontier';
import type { AcquireRequest } from '@crawlq/group-limiter';
import { crawlJobUnits, unitJobData, type CrawlJobData, type CrawlJobResult, type CrawlJobUnit } from '@crawlq/queue';
import { RobotsFetchPostponedError, type RobotsPolicy, type RobotsVerdict } from '@crawlq/robots';
import { WarcWriteError, type ResultSink, type WarcWriter } from '@crawlq/sink';
import { DelayedError, type Job } from 'bullmq';
import { BlockedGroupError, DeferJobError, JobLostError, PermanentJobError, RedirectStopError, RobotsUnreachableError, WorkerStoppingError, type DeferReason } from './errors.js';
import { fetchThroughGate, type RedirectHop } from './gate/gated-fetch.js';
import type { GroupGate } from './gate/group-gate.js';
import { type GroupWaits, type PageRecord, type SkippedRecord } from '@crawlq/crawl-control';
import type { PageRenderer } from './render/page-render.js';
import { createPageHandler, type JobMeta, type PageHandler } from './handlers/page-handler.js';
import { pageRecordCrawler } from './handlers/page-record-crawler.js';
import type { Crawler } from './handlers/crawler-types.js';
import type { RevisitHooks } from './revisit/revisit-hooks.js';

/** What a crawl job needs; one set per worker process. */
export interface CrawlJobContext {
  readonly gate: GroupGate;
  readonly fetcher: Fetcher;
  readonly frontier: Frontier;
  readonly sink: ResultSink;
  /**
   * Asked just before each record is written: true while this worker still
   * holds the job (and keeps it a lock period longer). False: the job is
   * another worker's now and its record theirs to write (a JobLostError ends
   * the job here). Absent: every record is written (one-off fetches).
   */
  readonly holdJob?: () => Promise<boolean>;
  /** Page archive (--warc): each fetched page's request and response, written before its record. */
  readonly warc?: WarcWriter;
  /** Keep the decoded HTML in the record's `body` (--store-body). */
  readonly storeBody?: boolean;
  /** Longest wait for a group slot spent sleeping in-process instead of a BullMQ deferral. */
  readonly maxInlineWaitMs: number;
  /** A job whose group stays blocked (paused, robots.txt unreachable) longer than this is dead-lettered. */
  readonly maxBlockedMs: number;
  /** Redirect hops per chain, across the jobs a chain is handed over to (--max-redirects). */
  readonly maxRedirects: number;
  /** The fleet's record of waiting groups (progress line, `group list`); absent: not recorded. */
  readonly waits?: Pick<GroupWaits, 'note' | 'clear'>;
  readonly fields: readonly FieldRule[];
  /** Distinct links kept (recorded and followed) from one page. @default 5000 */
  readonly maxLinksPerPage?: number;
  /**
   * Called once per written record (the fleet's page counters); awaited
   * before the job goes on, so a job that moved on or completed was counted.
   */
  readonly onPage?: (record: PageRecord) => void | Promise<void>;
  /** robots.txt for the fleet; absent with --ignore-robots. */
  readonly robots?: RobotsPolicy;
  /** Called with each group's robots.txt Crawl-delay (it slows the group's rate). */
  readonly onCrawlDelay?: (group: string, crawlDelayMs: number) => Promise<void>;
  /** Called once per skipped record written (robots.txt, a redirect not followed); awaited as `onPage` is. */
  readonly onSkipped?: (record: SkippedRecord) => void | Promise<void>;
  /** Called when the gate or a server's Retry-After defers the job (metrics). */
  readonly onDeferred?: (reason: DeferReason, retryInMs: number) => void;
  /**
   * Called after URLs of a job went back to their group's backlog: the group
   * is due again at once (the requeue gives their slots back), while the
   * process's releaser may be asleep until the slots the job had taken.
   */
  readonly onHandedBack?: () => void;
  /**
   * Aborted with a WorkerStoppingError when the worker stops and the grace
   * period is over: the fetch and gate waits stop, the slot is given back and
   * the job goes back to the queue without using an attempt.
   */
  readonly signal?: AbortSignal;
  /**
   * Aborted when the worker begins to stop: a job of several URLs hands the
   * ones it has not started back to the backlog and completes.
   */
  readonly draining?: AbortSignal;
  /** Renders a fetched HTML page in a browser where --render says so; its DOM is then what is extracted and stored. */
  readonly renderer?: PageRenderer;
  /** The crawler whose routes handle the fetched pages (--crawler); absent: the built-in page record crawler. */
  readonly handler?: PageHandler;
  /** A continuous crawl's schedule (see RevisitHooks); absent: every fetch is a first one. */
  readonly revisit?: RevisitHooks;
  /** Runs a job's sleep until its next start (see PassOptions.idle): its worker's request slot is free meanwhile. */
  readonly idle?: <T>(wait: () => Promise<T>) => Promise<T>;
  /**
   * A job done with its URLs goes on with its group's next ones (the
   * frontier's `continueJob`) while at most this many jobs wait in the crawl
   * queue for a worker (asked each time). Absent: every job completes with the URLs it came with.
   */
  readonly continueWhileWaiting?: () => number;
}

/** One URL as a job fetches it. */
interface UrlTask {
  /** The URL's data: the job's own, or one of its batch as a job of its own would carry it. */
  readonly data: CrawlJobData;
  /** The URL's fingerprint: the owner of the redirects it claims. */
  readonly owner: string;
  /** The job's attempt (1 = first). */
  readonly attempt: number;
  /** No attempt follows this one (a failure now is the job's last). */
  readonly lastAttempt: boolean;
  /** A job of several URLs moving on to this one (see AcquireRequest.progress). */
  readonly progress?: AcquireRequest['progress'];
  /** A later URL of such a job sleeps until its slot (up to BATCH_DUE_WAIT_MS, not the inline wait), unless this aborts. */
  readonly dueWait?: AbortSignal | undefined;
  /** A crawler's meta of the job's URLs, read once for the job (see PageHandler.jobMeta). */
  readonly jobMeta?: Promise<JobMeta> | undefined;
}

/**
 * Longest sleep before a later URL's slot in a job of several. The release
 * step spaces a job's slots at most its window apart; this is only a bound
 * for a group whose pace was cut meanwhile (the gate decides the start).
 */
const BATCH_DUE_WAIT_MS = 10_000;

/**
 * One crawl job: for each URL it carries (one, or a batch of its group),
 * wait for the group gate, fetch, parse, write the record, send new links to
 * the frontier. Throws DelayedError when the gate defers the job (no attempt
 * used), UnrecoverableError for permanent failures, and the fetch error itself
 * for retryable ones (BullMQ retries with backoff).
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
  // The links its pages add to its own group wait for it (see Frontier.holdBacklog).
  const goesOn = token !== undefined && context.continueWhileWaiting !== undefined && job.attemptsMade === 0 && job.stalledCounter === 0;
  const unhold = goesOn ? context.frontier.holdBacklog(job.data.group) : undefined;
  if (token === undefined || unhold === undefined) return (await processOwnUrls(job, token, context)).result;
  try {
    const first = await processOwnUrls(job, token, context);
    return first.finished ? await goOn({ job, token, result: first.result }, context) : first.result;
  } finally {
    unhold();
  }
}

/** The URLs the job came with; `finished`: every one was handled, none handed back. */
async function processOwnUrls(job: Job<CrawlJobData>, token: string | undefined, context: CrawlJobContext): Promise<BatchOutcome> {
  let units = crawlJobUnits(String(job.id), job.data);
  const stalledOut = job.stalledCounter > MAX_STALLS_OF_A_URL;
  if (units.length > 1) {
    // Handing URLs back needs the job's lock; BullMQ's worker always passes it.
    if (token === undefined) throw new Error(`job ${String(job.id)} carries ${units.length} URLs but came without its lock token`);
    if (job.stalledCounter > 0) units = await endAtUrlInHand({ job, units, token, alone: stalledOut }, context);
    // Every URL handled (the last one's worker died before the job completed): it completes.
    if (units.length > 1 && (!stalledOut || resumeAt(job.progress, units.length) >= units.length)) {
      return processBatch({ job, units, token, continued: false, jobMeta: readJobMeta(units.slice(resumeAt(job.progress, units.length)), context) }, context);
    }
  }
  if (stalledOut) {
    throw new PermanentJobError('stalled', `stalled ${job.stalledCounter} times: each worker that had it in hand died or hung (lock lost)`);
  }
  const [own] = units;
  try {
    const result = await crawlUrl({ data: job.data, owner: own?.id ?? String(job.id), ...attemptOf(job), jobMeta: readJobMeta([job.data], context) }, context);
    return { result, finished: true };
  } catch (error) {
    throw await translateError(error, { job, token, context });
  }
}

/**
 * A job done with its URLs takes its group's next ones from the backlog, as
 * long as the frontier gives it some (see CrawlJobContext.continueWhileWaiting):
 * the URLs its own pages found go out without BullMQ's work for a job of their
 * own. Only a job on its first attempt that never stalled: a URL it takes on
 * gets every attempt and stall a job of its own would. Each of those URLs is
 * one the job may hand back (a failure, a deferral, a stop): it goes back to
 * the front of the backlog and comes again as a job of its own, with BullMQ's
 * retries and dead letters, while this job completes.
 */
async function goOn({ job, token, result }: { job: Job<CrawlJobData>; token: string; result: CrawlJobResult }, context: CrawlJobContext): Promise<CrawlJobResult> {
  let total = result;
  while (context.draining?.aborted !== true && context.signal?.aborted !== true) {
    const maxWaiting = context.continueWhileWaiting?.() ?? 0;
    const data = await context.frontier.continueJob({ group: job.data.group, jobId: String(job.id), token, maxWaiting });
    if (data === undefined) break;
    job.data = data;
    job.progress = 0;
    const units = crawlJobUnits(String(job.id), data);
    const next = await processBatch({ job, units, token, continued: true, jobMeta: readJobMeta(units, context) }, context);
    total = { status: next.result.status, links: total.links + next.result.links, enqueued: total.enqueued + next.result.enqueued };
    if (!next.finished) break;
  }
  return total;
}

/** What a job's pass over some of its URLs did; `finished`: every one handled, none handed back. */
interface BatchOutcome {
  readonly result: CrawlJobResult;
  readonly finished: boolean;
}

/**
 * A job of several URLs fetches them one after another. Each admission
 * records which URL the job has moved on to (its progress), so a job taken
 * over after its worker died starts at the URL that worker had in hand.
 * A URL that is not fetched and recorded (a deferral, a failure, a stop):
 * - the first: the rest go back to the backlog, and the job goes on as a
 *   job of that URL alone, with BullMQ's retries, delays and dead letters;
 * - a later one: it and the rest go back to the front of the backlog, and
 *   the job completes. It comes back as the first URL of a job, so it is
 *   tried once more before its failures take the path above.
 */
async function processBatch(
  { job, units, token, continued, jobMeta }: { job: Job<CrawlJobData>; units: readonly CrawlJobUnit[]; token: string; continued: boolean; jobMeta: Promise<JobMeta> | undefined },
  context: CrawlJobContext,
): Promise<BatchOutcome> {
  const jobKey = `${job.queueQualifiedName}:${String(job.id)}`;
  // The requeue changes nothing when another worker holds the job now (its
  // lock expired): that one resumes from the job's progress, so nothing is
  // handed back twice.
  const handBack = async (request: { units: readonly CrawlJobUnit[]; data?: CrawlJobData; progress?: number }) => {
    if ((await context.frontier.requeue({ group: job.data.group, jobId: String(job.id), token, ...request })) && request.units.length > 0) context.onHandedBack?.();
  };
  let total: CrawlJobResult = { status: 0, links: 0, enqueued: 0 };
  const from = resumeAt(job.progress, units.length);
  for (let index = from; index < units.length; index += 1) {
    const unit = units[index];
    if (unit === undefined) break;
    if (index > from && context.draining?.aborted === true) {
      await handBack({ units: units.slice(index), progress: units.length });
      return { result: total, finished: false };
    }
    const data = unitJobData(job.data, unit);
    try {
      // A URL after the first records the job's progress as its admission moves it on (a continued job's starts at 0 already).
      const later = index > 0 ? { progress: { jobKey, value: index }, dueWait: context.draining } : continued ? { dueWait: context.draining } : {};
      const result = await crawlUrl({ data, owner: unit.id, ...attemptOf(job), ...later, jobMeta }, context);
      total = { status: result.status, links: total.links + result.links, enqueued: total.enqueued + result.enqueued };
    } catch (error) {
      // Not this worker's job any more: nothing to hand back, the holder resumes from its progress.
      if (error instanceof JobLostError) throw await translateError(error, { job, token, context });
      if (index === 0 && !continued) {
        await handBack({ units: units.slice(1), data });
        job.data = data;
        throw await translateError(error, { job, token, context });
      }
      await handBack({ units: units.slice(index), progress: units.length });
      return { result: total, finished: false };
    }
  }
  return { result: total, finished: true };
}

/**
 * Stalls a URL may be in hand at (its worker killed or hung until its lock
 * lapsed, the job handed over by BullMQ's stalled-job check) before it is
 * dead-lettered as `stalled`: a page that kills every worker that parses it
 * must not take the fleet down forever, while a worker or two killed by a
 * deploy or an OOM elsewhere is no fault of the URL. The crawl workers set
 * BullMQ's own bound out of reach (see crawl-worker.ts), so this one decides:
 * BullMQ's would fail a job of several URLs whole, without running it, and
 * drop every URL it had not yet fetched.
 */
export const MAX_STALLS_OF_A_URL = 3;

/**
 * A job of several URLs taken over after a stall ends at the URL in hand (the
 * one its progress names): the URLs after it go back to the front of the
 * backlog, in one atomic step with the job's change, so they are not tied to
 * a job that stalls again and may be dead-lettered, and its later stalls are
 * that URL's. `alone`: the job becomes that URL alone (it is about to be
 * dead-lettered, and its entry must name that URL). Returns the job's URLs
 * from now on; as they were when every URL was handled or the lock is no
 * longer this worker's (nothing changed: the job goes on as it is).
 */
async function endAtUrlInHand(
  { job, units, token, alone }: { job: Job<CrawlJobData>; units: readonly CrawlJobUnit[]; token: string; alone: boolean },
  context: CrawlJobContext,
): Promise<readonly CrawlJobUnit[]> {
  const from = resumeAt(job.progress, units.length);
  const inHand = units[from];
  if (inHand === undefined) return units;
  // The URLs before it were recorded (the progress says so) and stay in the
  // job: a resumed job fetches the one in hand as that URL's own owner.
  const data: CrawlJobData = alone || from === 0 ? unitJobData(job.data, inHand) : { ...job.data, batch: units.slice(1, from + 1) };
  if (!(await context.frontier.requeue({ group: job.data.group, jobId: String(job.id), token, units: units.slice(from + 1), data }))) return units;
  if (from + 1 < units.length) context.onHandedBack?.();
  job.data = data;
  return crawlJobUnits(String(job.id), data);
}

/** The job's attempt now, and whether it is its last (BullMQ's `attempts`, 1 when unset). */
function attemptOf(job: Job<CrawlJobData>): Pick<UrlTask, 'attempt' | 'lastAttempt'> {
  const attempt = job.attemptsMade + 1;
  return { attempt, lastAttempt: attempt >= (job.opts.attempts ?? 1) };
}

/** The URL a job of several starts at: 0, or where a worker before it got to (BullMQ's `progress`). */
function resumeAt(progress: unknown, units: number): number {
  return typeof progress === 'number' && Number.isInteger(progress) && progress > 0 ? Math.min(progress, units) : 0;
}

/** Fetches and records one URL; errors come out as thrown (translateError maps them for BullMQ). */
async function crawlUrl(task: UrlTask, context: CrawlJobContext): Promise<CrawlJobResult> {
  const { group } = task.data;
  const hopsBefore = task.data.redirects ?? 0;
  let hops = 0;
  try {
    if (context.robots) {
      const skipped = await checkRobots(task, context.robots, context);
      if (skipped) return skipped;
    }
    // A continuous crawl sends the stored validators; a URL fetched within its interval (a second copy) is not fetched again.
    const revisit = await context.revisit?.begin({ url: task.data.url, group, depth: task.data.depth });
    if (revisit === 'not-due') return { status: 0, links: 0, enqueued: 0 };
    const prepared = await handlerOf(context).prepare(task, context);
    const fetched = await fetchThroughGate(task.data.url, {
      gate: context.gate,
      fetcher: context.fetcher,
      groupOf: (url) => context.frontier.groupOf(url),
      maxInlineWaitMs: context.maxInlineWaitMs,
      due: task.data.due,
      lag: task.data.lag,
      progress: task.progress,
      maxDueWaitMs: task.dueWait === undefined ? undefined : BATCH_DUE_WAIT_MS,
      dueWaitSignal: task.dueWait,
      idle: context.idle,
      maxRedirects: Math.max(0, context.maxRedirects - hopsBefore),
      captureExchange: context.warc !== undefined,
      // A crawler's beforeRequest headers, then a revisit's validators.
      headers: prepared.headers === undefined && revisit?.headers === undefined ? undefined : { ...prepared.headers, ...revisit?.headers },
      signal: context.signal,
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
      // The group goes again: whatever this process said it waited for is over.
      // Not awaited: a round trip between the admission and the socket would make the start late.
      onFirstAdmitted: () => {
        void context.waits?.clear(group);
        return Promise.resolve();
      },
      // Claimed only once admitted: a hop handed over instead is claimed by the frontier.
      beforeRedirectSent: async (hop) => {
        if (!(await context.frontier.claim(hop.to, task.owner))) throw new RedirectStopError('redirect-to-seen', { target: hop.to, status: hop.status });
      },
    });
    return await prepared.handle(revisit === undefined ? fetched : { ...fetched, revisit });
  } catch (error) {
    if (error instanceof RedirectStopError) return recordRedirectStop(task, context, { stop: error, redirects: hopsBefore + hops });
    throw error;
  }
}

/**
 * Disallowed: a skipped record, no fetch, no dead letter. Unreachable
 * robots.txt (5xx, 429, network): treated as disallow-all while it is retried,
 * so the job is deferred, not failed (RFC 9309 2.3.1.4); once the retry budget
 * is spent, the job is dead-lettered as `robots-unreachable`.
 */
async function checkRobots(task: UrlTask, robots: RobotsPolicy, context: CrawlJobContext): Promise<CrawlJobResult | undefined> {
  let verdict: RobotsVerdict;
  try {
    verdict = await robots.check(task.data.url);
  } catch (error) {
    // The group is paused: robots.txt waits with the pages, as a deferral.
    if (error instanceof RobotsFetchPostponedError) throw new DeferJobError(error.retryInMs, 'paused');
    throw error;
  }
  if (verdict.crawlDelayMs !== null && verdict.crawlDelayMs > 0) await context.onCrawlDelay?.(task.data.group, verdict.crawlDelayMs);
  const failure = verdict.failure;
  if (verdict.reason === 'gave-up') {
    await context.waits?.clear(task.data.group);
    const forMs = failure?.since === null || failure?.since === undefined ? null : Date.now() - failure.since;
    const gaveUp = new RobotsUnreachableError({
      robotsUrl: verdict.robotsUrl,
      status: failure?.status ?? null,
      error: failure?.error ?? 'unknown error',
      failures: failure?.failures ?? 0,
      forMs,
    });
    throw new PermanentJobError(gaveUp.failureReason, gaveUp.message, { cause: gaveUp, status: gaveUp.status });
  }
  if (verdict.reason === 'unreachable') {
    const retryInMs = Math.max(1_000, verdict.retryAfterMs ?? 60_000);
    throw new DeferJobError(retryInMs, 'robots', `robots.txt unreachable (${failure?.error ?? 'no answer'})`);
  }
  if (verdict.allowed) return undefined;
  return recordSkipped(task, context, { skipped: 'robots', robotsUrl: verdict.robotsUrl });
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
  task: UrlTask,
  context: CrawlJobContext,
  { stop, redirects }: { stop: RedirectStopError; redirects: number },
): Promise<CrawlJobResult> {
  const redirect = { redirectTo: stop.target, ...(stop.status === undefined ? {} : { status: stop.status }) };
  switch (stop.reason) {
    case 'redirect-queued': {
      await handlerOf(context).handOver(task.data.url, stop.target);
      const handed = await context.frontier.enqueueRedirect(stop.target, { owner: task.owner, depth: task.data.depth, redirects });
      // Its own URL again (a loop through the gate's denial): try the whole job later.
      if (handed === 'self') throw new DeferJobError(1_000, 'rate');
      return recordSkipped(task, context, { skipped: handed === 'queued' ? 'redirect-queued' : 'redirect-to-seen', ...redirect });
    }
    case 'robots':
      return recordSkipped(task, context, { skipped: 'robots', robotsUrl: stop.robotsUrl ?? '', ...redirect });
    case 'scope':
    case 'redirect-to-seen':
      return recordSkipped(task, context, { skipped: stop.reason, ...redirect });
  }
}

type SkipReason =
  | { skipped: 'robots'; robotsUrl: string; redirectTo?: string; status?: number }
  | { skipped: 'redirect-to-seen' | 'redirect-queued' | 'scope'; redirectTo: string; status?: number };

/**
 * Writes a record if the job is still this worker's: a job whose lock ran out
 * during an outage may be running on two workers at once, and only the one
 * holding it writes, so the results hold each URL once.
 */
async function writeRecord(task: UrlTask, context: CrawlJobContext, record: PageRecord | SkippedRecord): Promise<void> {
  if (context.holdJob !== undefined && !(await context.holdJob())) throw new JobLostError(task.data.url);
  await context.sink.write(record);
}

async function recordSkipped(task: UrlTask, context: CrawlJobContext, reason: SkipReason): Promise<CrawlJobResult> {
  const record: SkippedRecord = { url: task.data.url, depth: task.data.depth, group: task.data.group, decidedAt: new Date().toISOString(), ...reason };
  // A crawler's sink holds its items only; a skipped URL is counted (onSkipped) and logged.
  if (handlerOf(context).builtIn) await writeRecord(task, context, record);
  await context.onSkipped?.(record);
  return { status: 0, links: 0, enqueued: 0 };
}

/**
 * The built-in page record crawler, run through the same page handler as a
 * user's: it reads no request meta and runs no hooks, so one serves every job.
 */
const BUILT_IN_HANDLER: PageHandler = createPageHandler({ crawler: pageRecordCrawler as unknown as Crawler, sortQuery: false, log: () => undefined });

function handlerOf(context: CrawlJobContext): PageHandler {
  return context.handler ?? BUILT_IN_HANDLER;
}

/**
 * A crawler's routes and data for the URLs a job is about to fetch, read in
 * one round trip as the job starts: under way while robots.txt is checked,
 * instead of a read of its own before each page's fetch.
 */
function readJobMeta(units: readonly Pick<CrawlJobUnit, 'url'>[], context: CrawlJobContext): Promise<JobMeta> | undefined {
  const reading = handlerOf(context).jobMeta(units.map((unit) => unit.url));
  // Awaited by the first page's prepare; a job that ends before (robots, a deferral) must not leave it unhandled.
  reading?.catch(() => undefined);
  return reading;
}

/** Maps an error to what BullMQ should do with the job. */
async function translateError(
  error: unknown,
  { job, token, context }: { job: Job<CrawlJobData>; token: string | undefined; context: CrawlJobContext },
): Promise<Error> {
  // Left as it is, to the worker that holds it now (BullMQ does nothing with a job that throws DelayedError).
  if (error instanceof JobLostError) return new DelayedError();
  // Whatever the abort made the job throw, it is not the job's failure:
  // another worker takes it up at once, with no attempt used.
  if (context.signal?.aborted === true && context.signal.reason instanceof WorkerStoppingError) {
    await job.moveToDelayed(Date.now(), token);
    return new DelayedError();
  }
  const deferral = deferralOf(error);
  if (deferral) {
    context.onDeferred?.(deferral.reason, deferral.retryInMs);
    let retryInMs = deferral.retryInMs;
    if (deferral.reason === 'paused' || deferral.reason === 'robots') {
      const now = Date.now();
      const { group } = job.data;
      const label = deferral.why ?? (() => pauseLabel(context, group, deferral));
      // The group's wait counts, not only this job's: a job enqueued late into
      // a long pause is held no longer than the group's bound.
      const groupSince = (await context.waits?.note(group, { cause: deferral.reason === 'robots' ? 'robots' : 'pause', until: now + retryInMs, label })) ?? now;
      const blockedSince = Math.min(job.data.blockedSince ?? now, groupSince);
      const blockedForMs = now - blockedSince;
      if (blockedForMs >= context.maxBlockedMs) {
        const why = deferral.why ?? (await pauseLabel(context, group, deferral));
        await context.waits?.clear(group);
        const blocked = new BlockedGroupError(group, blockedForMs, why);
        return new PermanentJobError(blocked.failureReason, blocked.message, { cause: blocked });
      }
      // Wake at the --max-blocked deadline at the latest, so the bound holds
      // however long the pause or the robots.txt retry would have been.
      retryInMs = Math.max(0, Math.min(retryInMs, blockedSince + context.maxBlockedMs - now));
      // updateData before moving, as BullMQ requires.
      if (job.data.blockedSince !== blockedSince) await job.updateData({ ...job.data, blockedSince });
    } else if (job.data.blockedSince !== undefined) {
      // Ordinary pacing again: a later block is timed from its own start.
      const { blockedSince: _ended, ...data } = job.data;
      await job.updateData(data);
    }
    await job.moveToDelayed(Date.now() + retryInMs, token);
    return new DelayedError();
  }
  // A page that cannot be archived fails at once: see WarcWriteError.
  if (error instanceof WarcWriteError) return new PermanentJobError('warc', error.message, { cause: error });
  if (error instanceof FetchError && !error.retryable) {
    return new PermanentJobError(error.failureReason ?? 'error', error.message, { cause: error, status: statusOf(error) ?? null });
  }
  return error instanceof Error ? error : new Error(String(error));
}

interface Deferral {
  readonly retryInMs: number;
  readonly reason: DeferReason;
  readonly why?: string | undefined;
  /** The status that paused the group, when this job's own fetch saw it. */
  readonly status?: number;
}

/**
 * A deferral from the gate, or a 429/503 whose Retry-After paused the group:
 * waiting out a server's "come back later" is not a failed attempt.
 */
function deferralOf(error: unknown): Deferral | undefined {
  if (error instanceof DeferJobError) return error;
  if (error instanceof FetchError && error.retryable) {
    const status = statusOf(error);
    const retryAfterMs = retryAfterOf(error);
    if ((status === 429 || status === 503) && retryAfterMs !== undefined) return { retryInMs: retryAfterMs, reason: 'paused', why: `${status} pause`, status };
  }
  return undefined;
}

/** `429 pause`, `503 pause`, `admin pause`: the pause's cause, from the group's state when the job did not see it. */
async function pauseLabel(context: CrawlJobContext, group: string, deferral: Deferral): Promise<string> {
  if (deferral.status !== undefined) return `${deferral.status} pause`;
  const reason = (await context.gate.pauseReason(group)) ?? '';
  const status = /\b(429|503)\b/.exec(reason)?.[1];
  if (status !== undefined) return `${status} pause`;
  return /admin/i.test(reason) ? 'admin pause' : 'pause';
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

function retryAfterOf(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof value === 'number' ? value : undefined;
}
