import { decodeBody, isHtml } from '@crawlq/extractor';
import type { FetchResult } from '@crawlq/fetcher';
import type { Frontier } from '@crawlq/frontier';
import type { CrawlJobData, CrawlJobResult } from '@crawlq/queue';
import { newWarcRecordId, packCapture, SINK_REVISIT, SINK_ROW, unpackCapture, warcCaptureOf, warcPayloadDigest, type ResultSink, type WarcCapture, type WarcWriter } from '@crawlq/sink';
import { tryNormalizeUrl, urlFingerprint, withoutUserinfo } from '@crawlq/urls';
// htmlparser2 through cheerio/slim, as the built-in crawler parses: several times faster than parse5.
import { load, type CheerioAPI } from 'cheerio/slim';
import { JobLostError } from '../errors.js';
import type { RenderOutcome } from '../render/page-render.js';
import type { PageRecord } from '@crawlq/crawl-control';
import { linkSetHash } from '../revisit/revisit-interval.js';
import type { RevisitTicket, RevisitVerdict } from '../revisit/revisit-hooks.js';
import type { CrawlContext, Crawler, CrawlLog, CrawlRender, CrawlRequest, CrawlResponse, EnqueueOptions, EnqueueResult } from './crawler-types.js';
import { handlerFailure } from './handler-errors.js';
import { archive, lendPageRecordEngine, pageRecordCore, pageRecordCrawler, type PageRecordEngine } from './page-record-crawler.js';
import { CrawlerDefinitionError, retryableByUser } from './user-errors.js';
import { MAX_USER_DATA_BYTES, type RequestMetaStore, type RequestMeta } from './request-meta.js';

/** One URL of a job, as processCrawlJob hands it over. */
export interface HandledTask {
  readonly data: CrawlJobData;
  readonly attempt: number;
  /** No attempt follows this one: a render missing content is recorded now instead of tried again. */
  readonly lastAttempt: boolean;
  /** The meta of the job's URLs, read when the job started (see PageHandler.jobMeta); absent: read for this URL alone. */
  readonly jobMeta?: Promise<JobMeta> | undefined;
}

/** The route and data of a job's URLs, by URL fingerprint (those that have any). */
export type JobMeta = ReadonlyMap<string, RequestMeta>;

/** The parts of a crawl job's context a crawler's page needs. */
export interface HandlerJobContext extends Omit<PageRecordEngine['services'], 'frontier'> {
  readonly frontier: Frontier;
  readonly sink: ResultSink;
  readonly holdJob?: () => Promise<boolean>;
  readonly warc?: WarcWriter;
  readonly signal?: AbortSignal;
  readonly onPage?: (record: PageRecord) => void | Promise<void>;
}

/** The fetched page as the gate returned it. */
export interface HandledFetch {
  readonly response: FetchResult;
  readonly waitMs: number;
  readonly requestedAt: number;
  /** A continuous crawl's ticket for this fetch: an unchanged page runs no route and gets no record. */
  readonly revisit?: RevisitTicket;
}

/** A page about to be requested: its headers, then its handling once fetched. */
export interface PreparedPage {
  readonly headers: Readonly<Record<string, string>> | undefined;
  handle(fetched: HandledFetch): Promise<CrawlJobResult>;
}

/** Runs a crawler's routes and hooks on the pages of a crawl job (see processCrawlJob). */
export interface PageHandler {
  /**
   * The built-in page record crawler: its skipped URLs are written to the
   * sink as records (a user's crawler's sink holds its items only), and an
   * unchanged page of a continuous crawl gets no record.
   */
  readonly builtIn: boolean;
  /** Reads the URL's route and data and runs `beforeRequest`. */
  prepare(task: HandledTask, context: HandlerJobContext): Promise<PreparedPage>;
  /** A redirect handed over as a job of its own keeps the route and data of the URL that led to it. */
  handOver(from: string, target: string): Promise<void>;
  /** The route and data of a URL, for `onFailure`. */
  meta(url: string): Promise<RequestMeta | undefined>;
  /**
   * The route and data of all of a job's URLs, in one round trip, for
   * `prepare` to find; undefined for the built-in crawler, which has none.
   */
  jobMeta(urls: readonly string[]): Promise<JobMeta> | undefined;
}

export interface PageHandlerOptions {
  readonly crawler: Crawler;
  /** Where labels and user data wait; absent for the built-in crawler, which enqueues with neither. */
  readonly metaStore?: RequestMetaStore;
  /** The fleet's `--sort-query`: URLs are keyed as the frontier normalises them. */
  readonly sortQuery: boolean;
  readonly log: (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;
}

/** Links admitted per frontier call, as the built-in crawler admits a page's links. */
const ADMIT_CHUNK = 500;
const NEVER = new AbortController().signal;
/** `enqueue`'s priority bound, the frontier's (see Frontier.addDiscovered). */
const MAX_PRIORITY = 1_000;

export function createPageHandler(options: PageHandlerOptions): PageHandler {
  const { crawler, metaStore, sortQuery } = options;
  const builtIn = (crawler as object) === pageRecordCrawler;
  if (!builtIn && metaStore === undefined) throw new Error("a crawler's page handler needs the crawl's request meta store");
  const normalise = (url: string) => tryNormalizeUrl(url, { sortQuery });
  const readMeta = (url: string) => (metaStore === undefined ? Promise.resolve(undefined) : metaStore.read(urlFingerprint(url)));
  return {
    builtIn,
    async prepare(task, context) {
      const log = pageLog(options.log, task.data.url);
      if (builtIn) {
        // Neither labels nor user data, nor hooks: no meta to read, no headers to add.
        const request = { url: task.data.url, label: crawler.defaultRoute, depth: task.data.depth, group: task.data.group, userData: {}, attempt: task.attempt };
        return { headers: undefined, handle: (fetched) => handlePage({ request, fetched, context, log, meta: undefined, lastAttempt: task.lastAttempt }) };
      }
      const fingerprint = urlFingerprint(task.data.url);
      const meta = task.jobMeta === undefined ? await metaStore?.read(fingerprint) : (await task.jobMeta).get(fingerprint);
      const label = meta?.label !== undefined && Object.hasOwn(crawler.routes, meta.label) ? meta.label : crawler.defaultRoute;
      const userData = meta?.userData ?? {};
      const request = { url: task.data.url, label, depth: task.data.depth, group: task.data.group, userData, attempt: task.attempt };
      let headers: Record<string, string> | undefined;
      if (crawler.beforeRequest) {
        const asked = { request, headers: {} as Record<string, string>, cookies: {} as Record<string, string>, log };
        await runUserCode(() => crawler.beforeRequest?.(asked));
        headers = { ...asked.headers };
        const cookies = Object.entries(asked.cookies).map(([name, value]) => `${name}=${value}`);
        if (cookies.length > 0) headers.cookie = [headers.cookie, ...cookies].filter(Boolean).join('; ');
      }
      return {
        headers,
        handle: (fetched) => handlePage({ request, fetched, context, log, meta: meta === undefined ? undefined : fingerprint, lastAttempt: task.lastAttempt }),
      };
    },
    async handOver(from, target) {
      if (metaStore === undefined) return;
      const meta = await readMeta(from);
      const normalised = normalise(target);
      if (meta !== undefined && normalised.ok) await metaStore.claim([urlFingerprint(normalised.url)], meta);
    },
    meta: readMeta,
    jobMeta: (urls) => (metaStore === undefined || builtIn ? undefined : metaStore.readMany(urls.map((url) => urlFingerprint(url)))),
  };

  async function handlePage(page: {
    request: Omit<CrawlRequest, 'loadedUrl'>;
    fetched: HandledFetch;
    context: HandlerJobContext;
    log: CrawlLog;
    meta: string | undefined;
    lastAttempt: boolean;
  }): Promise<CrawlJobResult> {
    const { fetched, context, log } = page;
    const { response } = fetched;
    // A continuous crawl: a 304 or an unchanged page costs no parse, no route and no record;
    // the archive gets a revisit record, the sink the time it was checked, the schedule the outcome.
    const verdict = fetched.revisit?.judge(response);
    if (verdict !== undefined && (verdict.outcome === 'unchanged' || verdict.outcome === 'notModified')) {
      const archived = await archiveUnchanged({ url: page.request.url, fetched, verdict, warc: context.warc });
      await context.sink.checked?.({ url: page.request.url, checkedAt: new Date().toISOString() });
      await verdict.commit({ archived });
      return { status: response.status, links: 0, enqueued: 0 };
    }
    const loadedUrl = withoutUserinfo(response.finalUrl);
    const request: CrawlRequest = { ...page.request, loadedUrl };
    // A user's page is rendered where the built-in crawler's would be (--render,
    // a limit rule, auto's verdict), before its hooks and route run: they read
    // the DOM the browser left. The built-in route renders for itself. The
    // render's own errors (a crash, content its gate did not admit in time)
    // are the engine's, retried as they are for the built-in crawler.
    const outcome = builtIn ? undefined : await renderFor({ request, fetched, context, lastAttempt: page.lastAttempt });
    // The body decoded and the page parsed on first use only: a route that reads neither pays for neither.
    let text: string | undefined | null = null;
    const textOf = () => (text ??= isTextual(response.contentType) ? decodeBody(response.body, response.contentType).text : undefined);
    let parsed: CheerioAPI | undefined;
    const items: object[] = [];
    let enqueued = 0;
    // A revisited page's links as the crawl sees them (normalised, in scope), for its link-set hash: a hub is told by it.
    const scoped: string[] | undefined = verdict === undefined ? undefined : [];
    const handlerStarted = performance.now();
    const crawlResponse: CrawlResponse = {
      status: response.status,
      headers: response.headers,
      contentType: response.contentType,
      get body() {
        return textOf() ?? response.body;
      },
      bytes: response.bodyBytes,
    };
    const crawlContext: CrawlContext = {
      request,
      response: crawlResponse,
      get $() {
        parsed ??= load(outcome?.html ?? textOf() ?? '', { baseURI: loadedUrl });
        return parsed;
      },
      rendered: outcome === undefined ? undefined : renderView(outcome),
      enqueue: async (urls, enqueueOptions) => {
        const result = await enqueue(urls, { ...enqueueOptions, from: request, frontier: context.frontier, scoped });
        enqueued += result.accepted;
        return result;
      },
      push: (item) => {
        if (typeof item !== 'object' || item === null || Array.isArray(item)) return Promise.reject(new TypeError('push: expected an object'));
        items.push(item);
        return Promise.resolve();
      },
      log,
      signal: context.signal ?? NEVER,
    };
    const route = crawler.routes[request.label];
    if (builtIn) {
      // crawlq's own route: its errors (a fetch, the archive, a render) are the engine's, mapped as they always were.
      let captured: WarcCapture | undefined;
      lendPageRecordEngine(crawlContext, { fetched, services: context, lastAttempt: page.lastAttempt, onArchived: (capture) => (captured = capture) });
      await route?.(crawlContext);
      const [record] = items as PageRecord[];
      if (record === undefined || items.length !== 1) throw new Error(`the page record route pushed ${items.length} records for ${request.url}`);
      // Archive (in the route), then record, then count, then complete: a job that completed has all three.
      if (context.holdJob !== undefined && !(await context.holdJob())) throw new JobLostError(request.url);
      // The content signature goes with the record (not into it): a sink counts a change by it.
      await context.sink.write(verdict === undefined ? record : { ...record, [SINK_REVISIT]: { signature: verdict.signature } });
      await context.onPage?.(record);
      await verdict?.commit({ archived: captured === undefined ? undefined : packCapture(captured, request.url), links: scoped && linkSetHash(scoped) });
      return { status: response.status, links: record.links.length, enqueued: record.enqueued };
    }
    await runUserCode(async () => {
      await crawler.afterResponse?.(crawlContext);
      if (route === undefined) throw new CrawlerDefinitionError(`no route ${JSON.stringify(request.label)}`);
      await route(crawlContext);
    });
    const parseMs = performance.now() - handlerStarted;
    // The capture is what later unchanged revisits of a page on a revisit schedule refer to.
    let captured: WarcCapture | undefined;
    const warc = context.warc ? await archive(context.warc, response, { requestedAt: fetched.requestedAt, rendered: outcome, onArchived: (capture) => (captured = capture) }) : undefined;
    // The items of a page are written together, while this worker still holds its job: see CrawlJobContext.holdJob.
    if (context.holdJob !== undefined && !(await context.holdJob())) throw new JobLostError(request.url);
    await Promise.all(items.map((item, index) => context.sink.write({ ...item, [SINK_ROW]: { key: `${request.url}#${index}`, url: request.url } })));
    // A URL on a revisit schedule keeps its route and data for its next fetch.
    if (page.meta !== undefined && verdict === undefined) await metaStore?.remove([page.meta]);
    await context.onPage?.(pageRecordOf({ request, fetched, enqueued, parseMs, warc, render: outcome?.summary }));
    // Items, then count, then schedule: a worker that dies in between fetches the page again rather than losing its new version.
    await verdict?.commit({ archived: captured === undefined ? undefined : packCapture(captured, request.url), links: scoped && linkSetHash(scoped) });
    // A URL this answer retired is never fetched again: its route and data go too (after the
    // commit, so a worker dying before it handles the last miss again with them).
    if (page.meta !== undefined && verdict?.retires === true) await metaStore?.remove([page.meta]);
    return { status: response.status, links: 0, enqueued };
  }

  async function enqueue(
    urls: Parameters<CrawlContext['enqueue']>[0],
    options: EnqueueOptions & { from: CrawlRequest; frontier: Frontier; scoped: string[] | undefined },
  ): Promise<EnqueueResult> {
    const { from, frontier, label, userData, sameGroupOnly, priority, scoped } = options;
    if (label !== undefined && !Object.hasOwn(crawler.routes, label)) {
      throw new CrawlerDefinitionError(`enqueue: no route ${JSON.stringify(label)} (routes: ${Object.keys(crawler.routes).join(', ')})`);
    }
    if (userData !== undefined && JSON.stringify(userData).length > MAX_USER_DATA_BYTES) {
      throw new CrawlerDefinitionError(`enqueue: userData over ${MAX_USER_DATA_BYTES} bytes as JSON`);
    }
    if (priority !== undefined && (!Number.isInteger(priority) || Math.abs(priority) > MAX_PRIORITY)) {
      throw new CrawlerDefinitionError(`enqueue: priority must be an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}, got ${String(priority)}`);
    }
    const meta: RequestMeta = { ...(label === undefined || label === crawler.defaultRoute ? {} : { label }), ...(userData === undefined ? {} : { userData }) };
    const withMeta = Object.keys(meta).length > 0;
    let rejected = 0;
    let otherGroup = 0;
    const kept: string[] = [];
    for (const input of listOf(urls)) {
      if (input === null || input === undefined || input === '') continue;
      let absolute: string;
      try {
        // An absolute http(s) URL as it is: the frontier normalises (and rejects) every URL it is given.
        absolute = typeof input === 'string' && ABSOLUTE.test(input) ? input : new URL(String(input), from.loadedUrl).href;
      } catch {
        rejected += 1;
        continue;
      }
      // Keyed (meta) or filtered by group: the URL as the frontier will key it.
      if (!withMeta && sameGroupOnly !== true) {
        kept.push(absolute);
        continue;
      }
      const normalised = normalise(absolute);
      if (!normalised.ok) {
        rejected += 1;
        continue;
      }
      if (sameGroupOnly === true && frontier.groupOf(normalised.url) !== from.group) otherGroup += 1;
      else kept.push(normalised.url);
    }
    const claimed = !withMeta || metaStore === undefined ? [] : await metaStore.claim([...new Set(kept.map((url) => urlFingerprint(url)))], meta);
    let accepted = 0;
    let duplicate = 0;
    let skipped = otherGroup;
    const admitted = new Set<string>();
    const admitOptions = priority === undefined ? {} : { priority };
    try {
      for (let start = 0; start < kept.length; start += ADMIT_CHUNK) {
        const result = await frontier.addDiscovered(kept.slice(start, start + ADMIT_CHUNK), from.depth, admitOptions);
        accepted += result.accepted;
        duplicate += result.duplicate;
        skipped += result.outOfScope + result.tooDeep + result.overLimit;
        rejected += result.rejected.length;
        if (scoped !== undefined) for (const url of result.scopedUrls) scoped.push(url);
        if (claimed.length > 0) for (const url of result.acceptedUrls) admitted.add(urlFingerprint(url));
      }
    } finally {
      // Meta this call wrote for a URL it did not admit belongs to no job of its own.
      if (claimed.length > 0) await metaStore?.remove(claimed.filter((fingerprint) => !admitted.has(fingerprint)));
    }
    return { accepted, duplicate, skipped, rejected };
  }
}

/**
 * Archives an unchanged revisit (--warc): a 304 as a `server-not-modified`
 * revisit record, a 200 whose payload is byte for byte the last archived
 * one as an `identical-payload-digest` record, each naming that capture. A
 * 200 whose content signature is unchanged but whose bytes are not (a clock
 * left out by --revisit-ignore) is archived in full, and becomes the capture
 * later revisits name: the archive keeps every payload it was sent.
 * Returns the new capture to store, if one was written.
 */
async function archiveUnchanged(options: { url: string; fetched: HandledFetch; verdict: RevisitVerdict; warc: WarcWriter | undefined }): Promise<Buffer | undefined> {
  const { url, fetched, verdict, warc } = options;
  const { exchange, finalUrl } = fetched.response;
  if (warc === undefined || exchange === undefined) return undefined;
  const refersTo = unpackCapture(verdict.archived, url);
  const base = { url: finalUrl, requestedAt: new Date(fetched.requestedAt), request: exchange.request, response: exchange.response };
  if (verdict.outcome === 'notModified') {
    await warc.write({ ...base, revisit: { profile: 'server-not-modified', refersTo } });
    return undefined;
  }
  if (refersTo !== undefined && refersTo.payloadDigest === warcPayloadDigest(exchange.response.body)) {
    await warc.write({ ...base, revisit: { profile: 'identical-payload-digest', refersTo } });
    return undefined;
  }
  const recordId = newWarcRecordId();
  await warc.write({ ...base, recordId });
  return packCapture(warcCaptureOf({ ...base, recordId }), url);
}

/** Renders a user's page where --render says so: an HTML page that is not an error, with a renderer at hand. */
async function renderFor({ request, fetched, context, lastAttempt }: { request: CrawlRequest; fetched: HandledFetch; context: HandlerJobContext; lastAttempt: boolean }): Promise<RenderOutcome | undefined> {
  const { response } = fetched;
  if (context.renderer === undefined || !isHtml(response.contentType) || response.status >= 400) return undefined;
  return context.renderer.render({ group: request.group, response, lastAttempt }, context);
}

/** What a route is told about its page's rendering (the record's summary without its request log). */
function renderView({ html, summary }: RenderOutcome): CrawlRender {
  return Object.freeze({
    reason: summary.reason,
    html,
    settled: summary.settled,
    complete: summary.complete,
    missing: Object.freeze([...(summary.missing ?? [])]),
    steps: summary.steps,
    renderMs: summary.renderMs,
  });
}

/** An absolute http(s) URL, which needs no base to resolve against. */
const ABSOLUTE = /^https?:\/\//i;

/**
 * Runs the user's code; what it throws becomes the job's failure: retried
 * (a plain error, a RetryableError) or dead-lettered at once (a
 * NonRetryableError, a definition error), with the message and stack.
 */
async function runUserCode(run: () => unknown): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof JobLostError) throw error;
    const retryable = error instanceof CrawlerDefinitionError ? false : (retryableByUser(error) ?? true);
    throw handlerFailure(error, { retryable });
  }
}

function listOf(urls: Parameters<CrawlContext['enqueue']>[0]): Iterable<string | URL | null | undefined> {
  if (urls === null || urls === undefined) return [];
  return typeof urls === 'string' || urls instanceof URL ? [urls] : urls;
}

/** Bodies a handler gets as text: HTML, XML, JSON and text/*. */
function isTextual(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (isHtml(contentType)) return true;
  const essence = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return essence.startsWith('text/') || /[/+](?:xml|json)$/.test(essence);
}

function pageLog(log: PageHandlerOptions['log'], url: string): CrawlLog {
  const prefix = `${withoutUserinfo(url)}: `;
  return {
    debug: (message) => log(prefix + message, 'debug'),
    info: (message) => log(prefix + message, 'info'),
    warn: (message) => log(prefix + message, 'warn'),
    error: (message) => log(prefix + message, 'error'),
  };
}

/** The fleet's page counters (progress line, status, metrics) count a crawler's pages as the built-in crawler's. */
function pageRecordOf(page: {
  request: CrawlRequest;
  fetched: HandledFetch;
  enqueued: number;
  parseMs: number;
  warc: PageRecord['warc'] | undefined;
  render: PageRecord['render'] | undefined;
}): PageRecord {
  return { ...pageRecordCore(page), ...(page.render === undefined ? {} : { render: page.render }), ...(page.warc === undefined ? {} : { warc: page.warc }) };
}
