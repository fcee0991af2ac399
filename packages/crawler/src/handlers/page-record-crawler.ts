import { decodeBody, extractPage, isHtml, type ExtractedPage, type FieldRule } from '@crawlq/extractor';
import type { FetchResult } from '@crawlq/fetcher';
import { newWarcRecordId, warcCaptureOf, type WarcCapture, type WarcLocation, type WarcWriter } from '@crawlq/sink';
import type { BrowserRequestServices } from '../render/browser-requests.js';
import { renderedBody, type PageRenderer, type RenderOutcome } from '../render/page-render.js';
import type { PageRecord } from '@crawlq/crawl-control';
import type { CrawlContext, CrawlRequest } from './crawler-types.js';
import { defineCrawler } from './define-crawler.js';

/**
 * What the engine lends the built-in crawler's route for one page, beside
 * the public context: the crawl's record settings (field rules, link cap,
 * --store-body, --warc, --render) and the fetch's timings. A user's crawler
 * gets none of it: these are the page record's own fields.
 */
export interface PageRecordEngine {
  readonly fetched: { readonly response: FetchResult; readonly waitMs: number; readonly requestedAt: number };
  /** The job's last attempt: a render missing content requests is recorded as incomplete rather than tried again. */
  readonly lastAttempt: boolean;
  /** The page's response went into the archive (--warc): what a later revisit record names of it. */
  readonly onArchived?: (capture: WarcCapture) => void;
  readonly services: BrowserRequestServices & {
    readonly fields: readonly FieldRule[];
    readonly maxLinksPerPage?: number;
    readonly storeBody?: boolean;
    readonly warc?: WarcWriter;
    readonly renderer?: PageRenderer;
  };
}

const ENGINES = new WeakMap<object, PageRecordEngine>();

/** Lends the engine's parts to the built-in route for this page's context (see PageRecordEngine). */
export function lendPageRecordEngine(context: CrawlContext, engine: PageRecordEngine): void {
  ENGINES.set(context, engine);
}

const DEFAULT_MAX_LINKS_PER_PAGE = 5_000;

/**
 * The built-in crawler, which a crawl without --crawler runs: one route that
 * writes one page record per URL (title, description, canonical, lang, the
 * page's links, the `fields` selectors, timings) and follows every link the
 * frontier admits. Its links go through `enqueue` and its record through
 * `push`, as a user's crawler's do.
 */
export const pageRecordCrawler = defineCrawler<PageRecord>()({
  name: 'page-record',
  routes: {
    page: async (context) => {
      const engine = ENGINES.get(context);
      if (engine === undefined) throw new Error('the page record route runs only inside crawlq, which lends it the crawl settings');
      const { request, enqueue, push } = context;
      const { fetched, services, lastAttempt, onArchived } = engine;
      const { response } = fetched;
      const html = isHtml(response.contentType) && response.status < 400;
      const rendered = html && services.renderer ? await services.renderer.render({ group: request.group, response, lastAttempt }, services) : undefined;
      const parseStarted = performance.now();
      const page = html
        ? extractPage({
            ...(rendered ? renderedBody(rendered) : { body: response.body, contentType: response.contentType }),
            url: response.finalUrl,
            fields: services.fields,
            maxLinks: services.maxLinksPerPage ?? DEFAULT_MAX_LINKS_PER_PAGE,
          })
        : undefined;
      const parseMs = performance.now() - parseStarted;
      const enqueued = page ? (await enqueue(page.followLinks)).accepted : 0;
      const record: PageRecord = {
        ...pageRecordCore({ request, fetched, enqueued, parseMs, page }),
        ...(page && services.fields.length > 0 ? { fields: page.fields } : {}),
        ...(page && page.truncated.length > 0 ? { truncated: page.truncated } : {}),
        ...(rendered ? { render: rendered.summary } : {}),
        ...(services.storeBody === true && isHtml(response.contentType) ? { body: rendered?.html ?? decodeBody(response.body, response.contentType).text } : {}),
        ...(services.warc && response.exchange ? { warc: await archive(services.warc, response, { requestedAt: fetched.requestedAt, rendered, onArchived }) } : {}),
      };
      // Archived before it is pushed: the engine then writes it, counts it and completes the job, in that order.
      await push(record);
    },
  },
  defaultRoute: 'page',
});

/**
 * Writes a page's exchange (and its rendered DOM, if any) to the archive, and
 * hands `onArchived` the capture a later unchanged revisit's record refers to.
 * Undefined without a recorded exchange.
 */
export async function archive(
  warc: WarcWriter,
  response: FetchResult,
  { requestedAt, rendered, onArchived }: { requestedAt: number; rendered: RenderOutcome | undefined; onArchived: ((capture: WarcCapture) => void) | undefined },
): Promise<WarcLocation | undefined> {
  const { exchange } = response;
  if (!exchange) return undefined;
  const archived = { url: response.finalUrl, requestedAt: new Date(requestedAt), request: exchange.request, response: exchange.response, recordId: newWarcRecordId() };
  const location = await warc.write({ ...archived, ...(rendered ? { rendered: renderedBody(rendered) } : {}) });
  onArchived?.(warcCaptureOf(archived));
  return location;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * A page record's fields up to `enqueued`, in the record's order: the
 * built-in crawler adds its extras after them, and a user's crawler's pages
 * are counted (progress, status, metrics) as such a record without a parse.
 */
export function pageRecordCore(parts: {
  request: CrawlRequest;
  fetched: PageRecordEngine['fetched'];
  enqueued: number;
  parseMs: number;
  page?: Pick<ExtractedPage, 'title' | 'description' | 'canonical' | 'lang' | 'links' | 'linksTruncated'> | undefined;
}): PageRecord {
  const { request, fetched, enqueued, parseMs, page } = parts;
  const { response } = fetched;
  return {
    url: request.url,
    // A redirect's Location may carry user:password; records never hold it (loadedUrl has none).
    finalUrl: request.loadedUrl,
    status: response.status,
    contentType: response.contentType ?? null,
    title: page?.title ?? null,
    description: page?.description ?? null,
    canonical: page?.canonical ?? null,
    lang: page?.lang ?? null,
    links: page?.links ?? [],
    ...(page && page.linksTruncated > 0 ? { linksFound: page.links.length + page.linksTruncated, linksTruncated: page.linksTruncated } : {}),
    depth: request.depth,
    group: request.group,
    requestedAt: new Date(fetched.requestedAt).toISOString(),
    fetchedAt: new Date().toISOString(),
    attempts: request.attempt,
    retries: response.retries,
    bytes: response.bodyBytes,
    timings: { waitMs: round(fetched.waitMs), fetchMs: round(response.fetchMs), parseMs: round(parseMs) },
    enqueued,
  };
}
