import { decodeBody, isHtml } from '@crawlq/extractor';
import type { FetchResult } from '@crawlq/fetcher';
import type { Frontier } from '@crawlq/frontier';
import type { CrawlJobData, CrawlJobResult } from '@crawlq/queue';
import { SINK_ROW, type ResultSink, type WarcWriter } from '@crawlq/sink';
import { tryNormalizeUrl, urlFingerprint, withoutUserinfo } from '@crawlq/urls';
// htmlparser2 through cheerio/slim, as the built-in crawler parses: several times faster than parse5.
import { load, type CheerioAPI } from 'cheerio/slim';
import { JobLostError } from '../crawl-errors.js';
import type { PageRecord } from '../page-record.js';
import type { CrawlContext, Crawler, CrawlLog, CrawlRequest, CrawlResponse, EnqueueOptions, EnqueueResult, JsonObject } from './crawler-types.js';
import { CrawlerDefinitionError } from './define-crawler.js';
import { handlerFailure, retryableByUser } from './handler-errors.js';
import { MAX_USER_DATA_BYTES, type RequestMetaStore, type RequestMeta } from './request-meta.js';

/** One URL of a job, as processCrawlJob hands it over. */
export interface HandledTask {
  readonly data: CrawlJobData;
  readonly attempt: number;
}

/** The parts of a crawl job's context a crawler's page needs. */
export interface HandlerJobContext {
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
}

/** A page about to be requested: its headers, then its handling once fetched. */
export interface PreparedPage {
  readonly headers: Readonly<Record<string, string>> | undefined;
  handle(fetched: HandledFetch): Promise<CrawlJobResult>;
}

/** Runs a crawler's routes and hooks on the pages of a crawl job (see processCrawlJob). */
export interface PageHandler {
  /** Reads the URL's route and data and runs `beforeRequest`. */
  prepare(task: HandledTask, context: HandlerJobContext): Promise<PreparedPage>;
  /** A redirect handed over as a job of its own keeps the route and data of the URL that led to it. */
  handOver(from: string, target: string): Promise<void>;
  /** The route and data of a URL, for `onFailure`. */
  meta(url: string): Promise<RequestMeta | undefined>;
}

export interface PageHandlerOptions {
  readonly crawler: Crawler;
  readonly metaStore: RequestMetaStore;
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
  const normalise = (url: string) => tryNormalizeUrl(url, { sortQuery });
  return {
    async prepare(task, context) {
      const fingerprint = urlFingerprint(task.data.url);
      const meta = await metaStore.read(fingerprint);
      const label = meta?.label !== undefined && Object.hasOwn(crawler.routes, meta.label) ? meta.label : crawler.defaultRoute;
      const userData = meta?.userData ?? {};
      const log = pageLog(options.log, task.data.url);
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
        handle: (fetched) => handlePage({ request, fetched, context, log, meta: meta === undefined ? undefined : fingerprint }),
      };
    },
    async handOver(from, target) {
      const meta = await metaStore.read(urlFingerprint(from));
      const normalised = normalise(target);
      if (meta !== undefined && normalised.ok) await metaStore.claim([urlFingerprint(normalised.url)], meta);
    },
    meta: (url) => metaStore.read(urlFingerprint(url)),
  };

  async function handlePage(page: {
    request: Omit<CrawlRequest, 'loadedUrl'>;
    fetched: HandledFetch;
    context: HandlerJobContext;
    log: CrawlLog;
    meta: string | undefined;
  }): Promise<CrawlJobResult> {
    const { fetched, context, log } = page;
    const { response } = fetched;
    const loadedUrl = withoutUserinfo(response.finalUrl);
    const request: CrawlRequest = { ...page.request, loadedUrl };
    const text = isTextual(response.contentType) ? decodeBody(response.body, response.contentType).text : undefined;
    let parsed: CheerioAPI | undefined;
    const items: JsonObject[] = [];
    let enqueued = 0;
    const handlerStarted = performance.now();
    const crawlContext: CrawlContext = {
      request,
      response: { status: response.status, headers: response.headers, contentType: response.contentType, body: text ?? response.body, bytes: response.bodyBytes } satisfies CrawlResponse,
      get $() {
        parsed ??= load(text ?? '', { baseURI: loadedUrl });
        return parsed;
      },
      enqueue: async (urls, enqueueOptions) => {
        const result = await enqueue(urls, { ...(enqueueOptions ?? {}), from: request, frontier: context.frontier });
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
    await runUserCode(async () => {
      await crawler.afterResponse?.(crawlContext);
      const route = crawler.routes[request.label];
      if (route === undefined) throw new CrawlerDefinitionError(`no route ${JSON.stringify(request.label)}`);
      await route(crawlContext);
    });
    const parseMs = performance.now() - handlerStarted;
    const warc = context.warc && response.exchange
      ? await context.warc.write({ url: response.finalUrl, requestedAt: new Date(fetched.requestedAt), request: response.exchange.request, response: response.exchange.response })
      : undefined;
    // The items of a page are written together, while this worker still holds its job: see CrawlJobContext.holdJob.
    if (context.holdJob !== undefined && !(await context.holdJob())) throw new JobLostError(request.url);
    await Promise.all(items.map((item, index) => context.sink.write({ ...item, [SINK_ROW]: { key: `${request.url}#${index}`, url: request.url } })));
    if (page.meta !== undefined) await metaStore.remove([page.meta]);
    await context.onPage?.(pageRecordOf({ request, fetched, enqueued, parseMs, warc }));
    return { status: response.status, links: 0, enqueued };
  }

  async function enqueue(
    urls: Parameters<CrawlContext['enqueue']>[0],
    options: EnqueueOptions & { from: CrawlRequest; frontier: Frontier },
  ): Promise<EnqueueResult> {
    const { from, frontier, label, userData, sameGroupOnly, priority } = options;
    if (label !== undefined && !Object.hasOwn(crawler.routes, label)) {
      throw new CrawlerDefinitionError(`enqueue: no route ${JSON.stringify(label)} (routes: ${Object.keys(crawler.routes).join(', ')})`);
    }
    if (userData !== undefined && JSON.stringify(userData).length > MAX_USER_DATA_BYTES) {
      throw new CrawlerDefinitionError(`enqueue: userData over ${MAX_USER_DATA_BYTES} bytes as JSON`);
    }
    if (priority !== undefined && (!Number.isInteger(priority) || Math.abs(priority) > MAX_PRIORITY)) {
      throw new CrawlerDefinitionError(`enqueue: priority must be an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}, got ${String(priority)}`);
    }
    let rejected = 0;
    let otherGroup = 0;
    const kept: string[] = [];
    for (const input of listOf(urls)) {
      if (input === null || input === undefined || input === '') continue;
      let absolute: string;
      try {
        absolute = new URL(String(input), from.loadedUrl).href;
      } catch {
        rejected += 1;
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
    const meta: RequestMeta = { ...(label === undefined || label === crawler.defaultRoute ? {} : { label }), ...(userData === undefined ? {} : { userData }) };
    const claimed = Object.keys(meta).length === 0 ? [] : await metaStore.claim([...new Set(kept.map((url) => urlFingerprint(url)))], meta);
    let accepted = 0;
    let duplicate = 0;
    let skipped = otherGroup;
    const admitted = new Set<string>();
    try {
      for (let start = 0; start < kept.length; start += ADMIT_CHUNK) {
        const result = await frontier.addDiscovered(kept.slice(start, start + ADMIT_CHUNK), from.depth, priority === undefined ? {} : { priority });
        accepted += result.accepted;
        duplicate += result.duplicate;
        skipped += result.outOfScope + result.tooDeep + result.overLimit;
        rejected += result.rejected.length;
        for (const url of result.acceptedUrls) admitted.add(urlFingerprint(url));
      }
    } finally {
      // Meta this call wrote for a URL it did not admit belongs to no job of its own.
      await metaStore.remove(claimed.filter((fingerprint) => !admitted.has(fingerprint)));
    }
    return { accepted, duplicate, skipped, rejected };
  }
}

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
function pageRecordOf(page: { request: CrawlRequest; fetched: HandledFetch; enqueued: number; parseMs: number; warc: PageRecord['warc'] | undefined }): PageRecord {
  const { request, fetched, enqueued } = page;
  const { response } = fetched;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    url: request.url,
    finalUrl: request.loadedUrl,
    status: response.status,
    contentType: response.contentType ?? null,
    title: null,
    description: null,
    canonical: null,
    lang: null,
    links: [],
    depth: request.depth,
    group: request.group,
    requestedAt: new Date(fetched.requestedAt).toISOString(),
    fetchedAt: new Date().toISOString(),
    attempts: request.attempt,
    retries: response.retries,
    bytes: response.bodyBytes,
    timings: { waitMs: round(fetched.waitMs), fetchMs: round(response.fetchMs), parseMs: round(page.parseMs) },
    enqueued,
    ...(page.warc === undefined ? {} : { warc: page.warc }),
  };
}
