import type { CheerioAPI } from 'cheerio/slim';

/** What `userData` and pushed items may hold: a JSON object (it travels through Redis and the sink as JSON). */
export type JsonObject = { readonly [key: string]: unknown };

/** The URL a route handles, as the frontier admitted it. */
export interface CrawlRequest<Label extends string = string, UserData extends JsonObject = JsonObject> {
  /** The normalised URL, as enqueued. */
  readonly url: string;
  /** The URL of the response, after the redirects followed (userinfo removed). */
  readonly loadedUrl: string;
  /** The route that handles it: the `label` it was enqueued with, else the crawler's `defaultRoute`. */
  readonly label: Label;
  /** Link distance from a seed (seeds are 0); `enqueue` adds one. */
  readonly depth: number;
  /** Its politeness group (host or registrable domain). */
  readonly group: string;
  /** What `enqueue(..., { userData })` gave it; `{}` for seeds and URLs enqueued without. */
  readonly userData: UserData;
  /** The queue-level attempt (1 = first). */
  readonly attempt: number;
}

/** The response a route handles (any status: a 404 is a page too). */
export interface CrawlResponse {
  readonly status: number;
  /** Response headers, `set-cookie` removed. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly contentType: string | undefined;
  /** Decoded text for HTML, XML, JSON and text/* responses; the bytes as they came for anything else (images, PDF...). */
  readonly body: string | Buffer;
  /** Body bytes after decompression. */
  readonly bytes: number;
}

/** How `enqueue` admits URLs; the frontier's scope, depth limit, dedupe, robots.txt and politeness apply as to every URL. */
export interface EnqueueOptions<Label extends string = string> {
  /** The route that handles them. @default the crawler's `defaultRoute` */
  readonly label?: Label;
  /** Travels with each URL to its handler (`request.userData`): JSON, at most 64 KB. */
  readonly userData?: JsonObject;
  /** Only the URLs of this page's politeness group (host or domain). @default false */
  readonly sameGroupOnly?: boolean;
  /**
   * Their place in their group's queue: an integer from -1000 to 1000. A URL
   * of a higher priority is fetched before the URLs of lower ones that wait in
   * its group, whatever their depth (FIFO within a priority and depth, lowest
   * depth first). Groups still take turns, and politeness still holds.
   * URLs already seen keep their first priority.
   * @default 0
   */
  readonly priority?: number;
}

/** What one `enqueue` call did with its URLs. */
export interface EnqueueResult {
  /** New URLs admitted to the frontier. */
  readonly accepted: number;
  /** Seen before (in this call or the crawl). */
  readonly duplicate: number;
  /** Outside the crawl's scope (`--scope`, `--include`, `--exclude`), past `--max-depth`, or another group with `sameGroupOnly`. */
  readonly skipped: number;
  /** Not URLs (unparseable, not http(s)). */
  readonly rejected: number;
}

/** The worker's logger: lines go where the worker's log goes, prefixed with the URL. */
export interface CrawlLog {
  readonly debug: (message: string) => void;
  readonly info: (message: string) => void;
  readonly warn: (message: string) => void;
  readonly error: (message: string) => void;
}

/**
 * How a page was rendered in a browser (`--render always`, `auto` once its
 * group needs one, or a limit rule's `render`): the route's `$` is then the
 * DOM the browser left, after the page's scripts ran and its steps (waitFor,
 * scroll, "load more") were taken.
 */
export interface CrawlRender {
  /** `always` (--render or its rule), `auto` (its group's verdict is render), `sample` (auto, judging its group). */
  readonly reason: 'always' | 'auto' | 'sample';
  /** The DOM serialised after the wait and the steps: what `$` was built from. */
  readonly html: string;
  /** The wait ended by network idle or waitFor, not by --render-timeout. */
  readonly settled: boolean;
  /**
   * False only on the job's last attempt, when some of the page's content
   * requests (scripts, XHR, fetch, frames) were never admitted by their gate
   * in the page's time: the DOM may lack what they would have brought.
   * Earlier attempts of such a page are tried again, not handed to the route.
   */
  readonly complete: boolean;
  /** The URLs of the content requests the page went without (empty when complete). */
  readonly missing: readonly string[];
  /** Scroll and "load more" steps taken. */
  readonly steps: number;
  readonly renderMs: number;
}

/** What a route handler gets for one page. */
export interface CrawlContext<Label extends string = string, Item extends object = JsonObject> {
  readonly request: CrawlRequest<Label>;
  readonly response: CrawlResponse;
  /**
   * The page parsed by cheerio, on first use (an empty document for a body
   * that is not text). For a rendered page (see `rendered`): the DOM the
   * browser left, not the body the server sent (`response.body`).
   */
  readonly $: CheerioAPI;
  /** Set when the page was rendered in a browser (see --render); undefined for a plain fetch. */
  readonly rendered: CrawlRender | undefined;
  /**
   * Admits URLs (absolute, or relative to the page) to the frontier, at this
   * page's depth + 1. Nulls and empty strings are skipped, so
   * `enqueue($('a.next').map((_, a) => $(a).attr('href')))` reads well.
   */
  readonly enqueue: (urls: string | URL | null | undefined | Iterable<string | URL | null | undefined>, options?: EnqueueOptions<Label>) => Promise<EnqueueResult>;
  /**
   * Hands an item to the results sink. Items are written when the handler
   * returns, while this worker still holds the job: a handler that throws, or
   * a worker killed mid-handler, writes none of this page's items (its retry
   * pushes them again).
   */
  readonly push: (item: Item) => Promise<void>;
  readonly log: CrawlLog;
  /** Aborted when the worker stops and the grace period is over; the job goes back to the queue. */
  readonly signal: AbortSignal;
}

/** One route: handles the pages enqueued with its label. */
export type RouteHandler<Label extends string = string, Item extends object = JsonObject> = (context: CrawlContext<Label, Item>) => void | Promise<void>;

/** What `beforeRequest` may change: the request's headers (cookies included). */
export interface BeforeRequestContext<Label extends string = string> {
  readonly request: Omit<CrawlRequest<Label>, 'loadedUrl'>;
  /** Extra request headers (lower-case names); `user-agent` and `accept` are crawlq's own and cannot be replaced. */
  readonly headers: Record<string, string>;
  /** Cookies sent as one `cookie` header: name → value. */
  readonly cookies: Record<string, string>;
  readonly log: CrawlLog;
}

/** What `onFailure` is told about a failed attempt. */
export interface FailureContext<Label extends string = string> {
  readonly request: Omit<CrawlRequest<Label>, 'loadedUrl'>;
  readonly error: Error;
  /** Queue-level attempts left after this one (0: this was the last, it is dead-lettered unless retried). */
  readonly attemptsLeft: number;
  readonly log: CrawlLog;
}

/**
 * What `onFailure` decides: `retry` (the job's next attempt, with backoff,
 * while attempts are left), or `deadLetter` now with the user's `reason`
 * (kebab-case words, the dead letter's reason). Nothing: crawlq decides
 * (NonRetryableError and permanent fetch failures are dead-lettered at once,
 * the rest retried while attempts are left).
 */
export type FailureDecision = { readonly retry: true } | { readonly deadLetter: true; readonly reason?: string; readonly message?: string };

/** Hooks around every page, whatever its route. */
export interface CrawlerHooks<Label extends string = string, Item extends object = JsonObject> {
  /** Before each page's request (not robots.txt's): add headers or cookies. */
  readonly beforeRequest?: (context: BeforeRequestContext<Label>) => void | Promise<void>;
  /** After each response, before its route: the same context the route gets (throw to fail the page). */
  readonly afterResponse?: (context: CrawlContext<Label, Item>) => void | Promise<void>;
  /** On each failed attempt (the fetch, a hook or the route threw). */
  readonly onFailure?: (context: FailureContext<Label>) => FailureDecision | undefined | void | Promise<FailureDecision | undefined | void>;
}

/** What `defineCrawler` takes. */
export interface CrawlerDefinition<Label extends string = string, Item extends object = JsonObject> extends CrawlerHooks<Label, Item> {
  /**
   * Names the crawler in the fleet's crawl definition (with a hash of its
   * module): every worker of a crawl must run the same one.
   * @default the module's file name
   */
  readonly name?: string;
  /** One handler per label; a URL enqueued with a label is handled by its route. */
  readonly routes: { readonly [L in Label]: RouteHandler<Label, Item> };
  /** The route of seeds, of URLs enqueued without a label, and of redirects handed over. */
  readonly defaultRoute: NoInfer<Label>;
}

/** A crawler as `defineCrawler` returns it: the module's default export. */
export interface Crawler<Label extends string = string, Item extends object = JsonObject> extends CrawlerDefinition<Label, Item> {
  /** Marks a crawler made by `defineCrawler`, whichever copy of crawlq made it. */
  readonly [CRAWLER_BRAND]: true;
}

/** A global symbol: the user's module may import another copy of crawlq than the worker runs. */
export const CRAWLER_BRAND: unique symbol = Symbol.for('crawlq.crawler');
