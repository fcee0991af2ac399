/** One request the page's browser wants to make (the page's own document excluded). */
export interface BrowserRequest {
  readonly url: string;
  readonly method: string;
  /** Playwright's resource type: document, script, xhr, fetch, stylesheet, image, font, media, ... */
  readonly resourceType: string;
  /** A frame's document (an iframe, or the page navigating away). */
  readonly navigation: boolean;
}

/** What `RenderOptions.fetch` is told about the page a request belongs to. */
export interface BrowserRequestPage {
  /** Aborted once the page is done. */
  readonly signal: AbortSignal;
  /**
   * Latest time (performance.now() clock) at which the request may still be
   * admitted: a gate that cannot admit it by then answers `deferred` at once.
   */
  readonly deadline: number;
  /**
   * Call once the gate admitted the request (it is being made): until then,
   * its wait moves the render's bound back (see `RenderOptions.gateWaitMs`).
   */
  readonly admitted: () => void;
}

/** What became of one request the browser wanted to make. */
export type RequestFate = 'made' | 'blocked' | 'deferred' | 'failed';

/**
 * The caller's answer to a browser request: the response it fetched (through
 * its gate), or why the request was not made. `deferred`: the gate did not
 * admit it within the page's time; `blocked`: it may not be made at all
 * (robots.txt, SSRF guard, scope, resource type); `failed`: made, no usable response.
 */
export type SubrequestAnswer =
  | { readonly fate: 'made'; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Buffer }
  | { readonly fate: 'blocked' | 'deferred' | 'failed'; readonly why: string };

/** One line of a rendered page's request log. */
export interface RenderedRequest {
  readonly url: string;
  readonly resourceType: string;
  readonly fate: RequestFate;
  readonly status?: number;
  readonly why?: string;
}

/** The page's document as the caller fetched it: the browser is handed it, it does not request it again. */
export interface FetchedDocument {
  readonly url: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** How one page is rendered. */
export interface RenderOptions {
  readonly document: FetchedDocument;
  /**
   * Every other request the page makes, in turn: the caller fetches it (or
   * says why not). `deadline` (performance.now() clock) is when the page's
   * time is up; `signal` aborts once the page is done.
   */
  readonly fetch: (request: BrowserRequest, page: BrowserRequestPage) => Promise<SubrequestAnswer>;
  /** Resource types never requested. @default image, font, media */
  readonly blockedTypes?: ReadonlySet<string>;
  /**
   * The render's own bound: loading, waiting, steps. Time during which one
   * of the page's requests waits for its host's gate does not count (it is
   * the host's politeness, not the page's slowness), up to `gateWaitMs`.
   */
  readonly timeoutMs: number;
  /** Most time spent waiting for the gate that moves the bound back. @default timeoutMs */
  readonly gateWaitMs?: number | undefined;
  /** No request in flight for this long counts as settled. @default 500 */
  readonly idleMs?: number;
  /** Wait for this CSS selector instead of network idle (still bounded by timeoutMs). */
  readonly waitFor?: string | undefined;
  /** Scroll to the bottom this many times, waiting for the page to settle after each (infinite scroll). */
  readonly scrollSteps?: number | undefined;
  /** Click this selector ("load more") up to clickSteps times while it is visible. */
  readonly clickSelector?: string | undefined;
  readonly clickSteps?: number | undefined;
  /** Write a PNG of the rendered page here. */
  readonly screenshotPath?: string | undefined;
}

/** A rendered page. */
export interface RenderedPage {
  /** The DOM serialised after the wait and the steps. */
  readonly html: string;
  readonly title: string;
  /** Characters of visible text (document.body.innerText). */
  readonly textLength: number;
  /** Every request the page wanted, in order, with its fate. */
  readonly requests: readonly RenderedRequest[];
  /**
   * The page's content requests (see {@link CONTENT_TYPES}) that were
   * deferred: never admitted by the gate within the page's time. The DOM
   * may lack whatever they would have brought; empty for a complete page.
   */
  readonly missing: readonly RenderedRequest[];
  /** The wait ended by network idle or the selector, not by the time bound. */
  readonly settled: boolean;
  /** Scroll and click steps taken. */
  readonly steps: number;
  readonly renderMs: number;
}

/** Types a rendering browser never loads unless asked to (they do not change links or text). */
export const DEFAULT_BLOCKED_TYPES: ReadonlySet<string> = new Set(['image', 'font', 'media']);

/**
 * Resource types whose absence can leave a page without links, title or
 * text: scripts, XHR and fetch, frames. A stylesheet or image the page went
 * without changes how it looks, not what a crawler reads from it.
 */
export const CONTENT_TYPES: ReadonlySet<string> = new Set(['script', 'xhr', 'fetch', 'document']);
