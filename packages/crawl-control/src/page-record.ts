import type { RenderedRequest } from '@crawlq/renderer';

/** One line of the results file: what crawlq learned about one URL. */
export interface PageRecord {
  /** Normalised URL, as enqueued. */
  readonly url: string;
  /** URL after redirects. */
  readonly finalUrl: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly title: string | null;
  readonly description: string | null;
  readonly canonical: string | null;
  readonly lang: string | null;
  /** Absolute URLs found on the page, before scope filtering. */
  readonly links: readonly string[];
  /**
   * Only on a page with more links than `--max-links-per-page`: links kept
   * plus `<a href>`s left unread after the cap (`linksTruncated`). `links`
   * then holds exactly the cap, so a record stays bounded.
   */
  readonly linksFound?: number;
  readonly linksTruncated?: number;
  readonly depth: number;
  readonly group: string;
  /**
   * ISO 8601 time the request that got this response went out (after got's
   * retries and redirect hops, each of which the group gate admitted).
   */
  readonly requestedAt: string;
  /** ISO 8601 time the response arrived. */
  readonly fetchedAt: string;
  /** Queue-level attempt that produced this record (1 = first). */
  readonly attempts: number;
  /** Requests got retried inside this attempt. */
  readonly retries: number;
  readonly bytes: number;
  readonly timings: {
    /** Waiting for the group's rate, concurrency or pause (not network time). */
    readonly waitMs: number;
    readonly fetchMs: number;
    readonly parseMs: number;
  };
  /** Links this page added to the frontier. */
  readonly enqueued: number;
  /** User-defined fields from the config's `fields` selectors. */
  readonly fields?: Readonly<Record<string, string | readonly string[] | null>>;
  /**
   * Only when a record cap cut something: `title` (over 1,000 code
   * points), `description` (2,000), `fields.NAME` (a value over 10,000, or
   * more than 1,000 values), `canonical` (over 2,048 characters: dropped),
   * `lang` (over 100 code points).
   */
  readonly truncated?: readonly string[];
  /** Only for a page rendered in a browser (--render): why, how it went, and every request the page made, blocked or deferred. */
  readonly render?: RenderSummary;
  /** Decoded HTML (the rendered DOM for a rendered page), with --store-body. */
  readonly body?: string;
  /** Where the page's WARC records are, with --warc: file name, offset of the response record, bytes of both records. */
  readonly warc?: { readonly file: string; readonly offset: number; readonly length: number };
}

/**
 * A URL crawlq chose not to fetch, or a job that stopped at a redirect:
 * robots.txt disallows the URL (or its redirect's target, then with
 * `redirectTo`), the redirect leaves the crawl's scope or leads to a page
 * already seen, or the redirect's target was handed to the frontier as a job
 * of its own (`redirect-queued`: another group, or its group's gate held it
 * back). Recorded, never dead-lettered.
 */
export type SkippedRecord = {
  readonly url: string;
  readonly depth: number;
  readonly group: string;
  readonly decidedAt: string;
} & (
  | { readonly skipped: 'robots'; readonly robotsUrl: string; readonly redirectTo?: string; readonly status?: number }
  | { readonly skipped: 'redirect-to-seen' | 'redirect-queued' | 'scope'; readonly redirectTo: string; readonly status?: number }
);

/** What a page record says about its rendering (field `render`). */
export interface RenderSummary {
  /** Why it was rendered: `always` (--render or its rule), `auto` (its group's verdict is render), `sample` (auto, judging its group). */
  readonly reason: 'always' | 'auto' | 'sample';
  /** Auto: did the browser find links, a title or text the plain fetch missed? */
  readonly neededBrowser?: boolean;
  /** Auto: the group's verdict after this page (absent while undecided). */
  readonly verdict?: 'render' | 'static';
  /** The wait ended by network idle or waitFor, not by --render-timeout. */
  readonly settled: boolean;
  /** Scroll and "load more" steps taken. */
  readonly steps: number;
  readonly renderMs: number;
  /** The page's own requests (its document excluded) by fate. */
  readonly requests: { readonly made: number; readonly blocked: number; readonly deferred: number; readonly failed: number };
  /** Each of them (the first 100): URL, resource type, fate, status or why. */
  readonly log: readonly RenderedRequest[];
  /** File name of the page's screenshot in the --screenshot directory. */
  readonly screenshot?: string;
  /**
   * False when some of the page's content requests (scripts, XHR, fetch,
   * frames) were never admitted by their gate in the page's time: the DOM,
   * and so the links, title and text, may lack what they would have brought.
   * Such a page is tried again while the job has attempts left; only its
   * last attempt is recorded so, with those requests (`deferred`) in `log`.
   */
  readonly complete: boolean;
  /** With `complete: false`: the URLs of the content requests the page went without. */
  readonly missing?: readonly string[];
}
