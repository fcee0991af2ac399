import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page, Route } from 'playwright-core';
import type { BrowserPool, BrowserTab } from './browser-pool.js';
import { BrowserCrashedError } from './errors.js';
import { CONTENT_TYPES, DEFAULT_BLOCKED_TYPES, type RenderedPage, type RenderedRequest, type RenderOptions, type SubrequestAnswer } from './render-types.js';

/** Types that are long-lived streams or side channels: never requested (a crawler's fetch could not end them). */
const NEVER_TYPES = new Set(['eventsource', 'websocket', 'manifest', 'ping']);
/** A page that outlives its bound by this much is hung: its browser is killed. */
const HUNG_AFTER_MS = 30_000;
const DEFAULT_IDLE_MS = 500;
/** Route quiet this long, with the page showing nothing left to do, is settled (see `settle`). */
const QUICK_QUIET_MS = 100;
const SETTLE_POLL_MS = 50;
/** Scrolls to the bottom, then resolves after two frames (the scroll event's, and one after it), or after 200 ms. */
const SCROLL_TO_BOTTOM = `window.scrollTo(0, document.documentElement.scrollHeight);
new Promise((resolve) => { requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))); setTimeout(() => resolve(false), 200); })`;
/**
 * Asks for a URL, beyond the first, made while its first request is still
 * unanswered, that mark the URL as polled: the page is not waited for its
 * answer. Two, not one: components that fetch the same URL at once ask twice.
 */
const POLL_REPEATS = 2;
/** Committing the document the caller handed over needs no network: only a browser that is stuck takes this long. */
const COMMIT_WITHIN_MS = 10_000;
/** Headers that described the bytes on the wire, not the decoded body handed to the browser. */
const WIRE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * Renders one page in a pooled browser. The browser makes no request of its
 * own: the document is the one the caller fetched, and every other request is
 * intercepted and handed to `options.fetch` (the caller's gate decides
 * whether, when and how it is made). Only GET and HEAD are passed on, each
 * URL once per page; a page's POSTs, beacons, streams and repeated asks are
 * blocked, and a URL it keeps asking for while unanswered (a poll) is not
 * waited for. Navigations away from the page are blocked too (their URLs are
 * in the request log).
 *
 * Bounded: loading, waiting and steps end by `timeoutMs`, moved back by the
 * time the page's requests wait for their gate (at most `gateWaitMs`): a
 * page whose script waits its turn at a busy host still gets its own time
 * to run. A content request the gate does not admit by then is listed in
 * `missing`. A browser that does not answer well past the bound is killed,
 * and the render fails with a {@link BrowserCrashedError}, as it does when
 * the browser dies under it.
 */
export async function renderPage(pool: BrowserPool, options: RenderOptions): Promise<RenderedPage> {
  const hardBoundMs = options.timeoutMs + gateWaitOf(options);
  // The page's script is in every document of a tab: added once, when the tab opens.
  const setup = async (page: Page): Promise<void> => {
    await page.addInitScript(PAGE_ACTIVITY_SCRIPT);
  };
  return pool.withTab(setup, async (tab, kill) => {
    const started = performance.now();
    const done = new AbortController();
    // Every request of the page listens for its end: a page with many is not a leak.
    setMaxListeners(0, done.signal);
    const rendering = renderInTab(tab, options, { started, signal: done.signal });
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        kill();
        reject(new BrowserCrashedError(`the browser did not finish the page within ${hardBoundMs + HUNG_AFTER_MS} ms: killed`));
      }, hardBoundMs + HUNG_AFTER_MS);
    });
    try {
      return await Promise.race([rendering, hung]);
    } finally {
      clearTimeout(timer);
      done.abort();
      rendering.catch(() => undefined);
    }
  });
}

function gateWaitOf(options: RenderOptions): number {
  return Math.max(0, options.gateWaitMs ?? options.timeoutMs);
}

async function renderInTab(tab: BrowserTab, options: RenderOptions, run: { started: number; signal: AbortSignal }): Promise<RenderedPage> {
  const { document } = options;
  const { page } = tab;
  const gateWaitMs = gateWaitOf(options);
  const activity = new Activity();
  // The page's time starts once it is there (a busy machine may take a while to open it).
  const begun = performance.now();
  // The bound moves back while a request waits at its gate (up to gateWaitMs); the hard bound is where it can move to.
  const deadline = (): number => begun + options.timeoutMs + Math.min(gateWaitMs, activity.gateWaitedMs());
  const hardDeadline = begun + options.timeoutMs + gateWaitMs;
  const remaining = (): number => Math.max(1, deadline() - performance.now());
  const blocked = options.blockedTypes ?? DEFAULT_BLOCKED_TYPES;
  const requests: RenderedRequest[] = [];
  let documentServed = false;
  // A page asking for the same URL again (polling, a retry loop) learns nothing new from it.
  const asked = new Set<string>();

  const handle = async (route: Route): Promise<void> => {
    const request = route.request();
    const url = request.url();
    const resourceType = request.resourceType();
    const mainFrame = request.frame() === page.mainFrame();
    if (request.isNavigationRequest() && mainFrame) {
      if (!documentServed && sameDocument(url, document.url)) {
        documentServed = true;
        await route.fulfill({ status: document.status, headers: browserHeaders(document.headers), body: document.body }).catch(() => undefined);
        return;
      }
      requests.push({ url, resourceType, fate: 'blocked', why: 'navigation away from the page' });
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    const refusal = !/^https?:/i.test(url)
      ? 'not http(s)'
      : !['GET', 'HEAD'].includes(request.method())
        ? `method ${request.method()}`
        : NEVER_TYPES.has(resourceType) || blocked.has(resourceType)
          ? `resource type ${resourceType}`
          : asked.has(url)
            ? 'asked for again (polling)'
            : undefined;
    if (asked.has(url)) activity.askedAgain(url);
    asked.add(url);
    if (refusal !== undefined) {
      requests.push({ url, resourceType, fate: 'blocked', why: refusal });
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    const pending = activity.begin(url, resourceType);
    try {
      let answer: SubrequestAnswer;
      try {
        answer = await options.fetch({ url, method: request.method(), resourceType, navigation: request.isNavigationRequest() }, { signal: run.signal, deadline: hardDeadline, admitted: pending.admitted });
      } catch (error) {
        answer = { fate: 'failed', why: error instanceof Error ? error.message : String(error) };
      }
      pending.answered();
      if (answer.fate === 'made') {
        requests.push({ url, resourceType, fate: 'made', status: answer.status });
        await route.fulfill({ status: answer.status, headers: browserHeaders(answer.headers), body: answer.body }).catch(() => undefined);
      } else {
        requests.push({ url, resourceType, fate: answer.fate, why: answer.why });
        await route.abort(answer.fate === 'failed' ? 'failed' : 'blockedbyclient').catch(() => undefined);
      }
    } finally {
      pending.end();
    }
  };
  // The tab's route hands this page's requests here until the page is done.
  tab.handler = handle;
  // The document is at hand: committing it is quick. Its parsing and deferred
  // scripts (which may wait for their gate) are waited for against the moving bound.
  await page.goto(document.url, { waitUntil: 'commit', timeout: Math.max(remaining(), COMMIT_WITHIN_MS) });
  let settled = await untilBound((timeoutMs) => page.waitForLoadState('domcontentloaded', { timeout: timeoutMs }), deadline);
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  // Settled, as the route handler sees it and as the page does. The plain rule
  // is network idle: nothing in flight for `idleMs`. A page that shows it has
  // nothing left to do (loaded, no fetch or XHR or body read or script load
  // going, no timer or frame callback due within `idleMs`) is settled sooner,
  // once the route has been quiet for a short moment: a static page need not
  // sit out the whole idle time. A fetch the page has started may reach the
  // route a moment later on a busy machine: the page's own count covers that.
  const quickMs = Math.min(QUICK_QUIET_MS, idleMs);
  const settle = async (): Promise<boolean> => {
    for (;;) {
      if (!(await activity.idle(quickMs, deadline, run.signal))) return false;
      const inPage = await page.evaluate<PageActivity | null>(`typeof ${PAGE_ACTIVITY} === 'function' ? ${PAGE_ACTIVITY}(${idleMs}) : null`).catch(() => null);
      const quietFor = activity.quietFor();
      if (inPage !== null && quietFor >= quickMs && nothingLeft(inPage)) return true;
      // Quiet is the route's to judge: a page polling a URL it is refused keeps starting requests that end at once.
      if (quietFor >= idleMs && (inPage === null || inPage.inFlight === 0)) return true;
      if (performance.now() >= deadline() || run.signal.aborted) return false;
      await sleep(SETTLE_POLL_MS);
    }
  };
  if (settled) {
    if (options.waitFor === undefined) settled = await settle();
    else {
      const selector = options.waitFor;
      settled = await untilBound((timeoutMs) => page.waitForSelector(selector, { timeout: timeoutMs, state: 'attached' }), deadline);
    }
  }
  let steps = 0;
  for (let click = 0; options.clickSelector !== undefined && click < (options.clickSteps ?? 0) && performance.now() < deadline(); click += 1) {
    const button = page.locator(options.clickSelector).first();
    if (!(await button.isVisible().catch(() => false))) break;
    const clicked = await button.click({ timeout: remaining() }).then(() => true, () => false);
    // The requests a step sets going reach the route a moment later: the quiet is counted from the step.
    activity.touch();
    // Even a click that timed out may have set requests going: they are waited for.
    settled = await settle();
    if (!clicked) break;
    steps += 1;
  }
  for (let scroll = 0; scroll < (options.scrollSteps ?? 0) && performance.now() < deadline(); scroll += 1) {
    const before = await page.evaluate<number>('document.documentElement.scrollHeight');
    // The page hears of the scroll at its next frame (scroll events are dispatched there), not at once: waited
    // for, so that what its listener starts is in flight before the settle looks (a loaded machine's late frame
    // made the page look done). Bounded, for a page whose frames do not run.
    await page.evaluate(SCROLL_TO_BOTTOM);
    activity.touch();
    steps += 1;
    settled = await settle();
    if ((await page.evaluate<number>('document.documentElement.scrollHeight')) <= before) break;
  }
  const html = await page.content();
  const title = await page.title();
  const textLength = await page.evaluate<number>('document.body ? document.body.innerText.length : 0');
  if (options.screenshotPath !== undefined) await page.screenshot({ path: options.screenshotPath, timeout: Math.max(remaining(), 2_000) });
  // Read after the DOM: a request still at its gate now is one the page goes without.
  const waitedFor = [...requests, ...activity.pendingNow()];
  // A poll's answer is not content the page waited for: never missing.
  const missing = waitedFor.filter((request) => request.fate === 'deferred' && CONTENT_TYPES.has(request.resourceType));
  const log = [...waitedFor, ...activity.pollsNow()];
  return { html, title, textLength, requests: log, missing, settled, steps, renderMs: Math.round(performance.now() - run.started) };
}

/** What the page itself says it still has going (see PAGE_ACTIVITY_SCRIPT). */
interface PageActivity {
  /** Fetch and XHR requests started and not yet ended, polls (see POLL_REPEATS) left out. */
  readonly inFlight: number;
  /** Response bodies being read, and script elements loading. */
  readonly loading: number;
  /** Timeouts, animation frames and idle callbacks due within the idle time asked about. */
  readonly due: number;
  /** `document.readyState` is `complete`. */
  readonly loaded: boolean;
}

function nothingLeft(page: PageActivity): boolean {
  return page.loaded && page.inFlight === 0 && page.loading === 0 && page.due === 0;
}

const PAGE_ACTIVITY = '__crawlqActivity';

/**
 * Counts, in the page, what may still change its DOM or start a request:
 * the fetch and XHR requests its scripts start (one started in a click
 * handler is in the count as soon as the handler ran, before its
 * interception reaches the route handler; a URL the page keeps asking for
 * while its first request is unanswered is a poll, left out), response bodies being read,
 * script elements loading, and the timeouts, animation frames and idle
 * callbacks it has scheduled (intervals are not counted: a page's clock or
 * carousel would never let it settle; the requests they start are).
 */
const PAGE_ACTIVITY_SCRIPT = `(() => {
  // Per URL in flight: its requests not yet ended, and the asks made since the first of them.
  const open = new Map();
  const polled = new Set();
  let loading = 0;
  const timeouts = new Map();
  let frames = 0;
  let idles = 0;
  const urlOf = (input) => { try { return new URL(input instanceof Request ? input.url : String(input), location.href).href; } catch { return String(input); } };
  const begin = (url) => {
    const entry = open.get(url);
    if (entry === undefined) { open.set(url, { inFlight: 1, repeats: 0 }); return; }
    entry.inFlight += 1;
    entry.repeats += 1;
    if (entry.repeats >= ${POLL_REPEATS}) polled.add(url);
  };
  const end = (url) => {
    const entry = open.get(url);
    if (entry !== undefined && --entry.inFlight === 0) open.delete(url);
  };
  const fetch = window.fetch;
  if (typeof fetch === 'function') {
    window.fetch = function (...args) {
      const url = urlOf(args[0]);
      begin(url);
      let ended = false;
      const once = () => { if (!ended) { ended = true; end(url); } };
      try { return fetch.apply(this, args).then((response) => { once(); return response; }, (error) => { once(); throw error; }); } catch (error) { once(); throw error; }
    };
  }
  const urls = new WeakMap();
  const openOf = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (...args) {
    urls.set(this, urlOf(args[1]));
    return openOf.apply(this, args);
  };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    const url = urls.get(this) ?? '';
    begin(url);
    let ended = false;
    const once = () => { if (!ended) { ended = true; end(url); } };
    this.addEventListener('loadend', once, { once: true });
    try { return send.apply(this, args); } catch (error) { once(); throw error; }
  };
  for (const name of ['json', 'text', 'arrayBuffer', 'blob', 'formData']) {
    const read = Response.prototype[name];
    if (typeof read !== 'function') continue;
    Response.prototype[name] = function (...args) {
      loading += 1;
      let ended = false;
      const once = () => { if (!ended) { ended = true; loading -= 1; } };
      try { return read.apply(this, args).then((value) => { once(); return value; }, (error) => { once(); throw error; }); } catch (error) { once(); throw error; }
    };
  }
  const setTimeoutOf = window.setTimeout;
  const clearTimeoutOf = window.clearTimeout;
  window.setTimeout = function (handler, delay, ...args) {
    const due = performance.now() + Math.max(0, Number(delay) || 0);
    let id;
    const run = typeof handler === 'function' ? function (...given) { timeouts.delete(id); return handler.apply(this, given); } : handler;
    id = setTimeoutOf.call(window, run, delay, ...args);
    if (typeof handler === 'function') timeouts.set(id, due);
    return id;
  };
  window.clearTimeout = function (id) { timeouts.delete(id); return clearTimeoutOf.call(window, id); };
  const frameOf = window.requestAnimationFrame;
  const cancelFrameOf = window.cancelAnimationFrame;
  const pendingFrames = new Set();
  if (typeof frameOf === 'function') {
    window.requestAnimationFrame = function (callback) {
      const id = frameOf.call(window, (time) => { pendingFrames.delete(id); frames = pendingFrames.size; return callback(time); });
      pendingFrames.add(id);
      frames = pendingFrames.size;
      return id;
    };
    window.cancelAnimationFrame = function (id) { pendingFrames.delete(id); frames = pendingFrames.size; return cancelFrameOf.call(window, id); };
  }
  const idleOf = window.requestIdleCallback;
  const cancelIdleOf = window.cancelIdleCallback;
  const pendingIdles = new Set();
  if (typeof idleOf === 'function') {
    window.requestIdleCallback = function (callback, options) {
      const id = idleOf.call(window, (deadline) => { pendingIdles.delete(id); idles = pendingIdles.size; return callback(deadline); }, options);
      pendingIdles.add(id);
      idles = pendingIdles.size;
      return id;
    };
    window.cancelIdleCallback = function (id) { pendingIdles.delete(id); idles = pendingIdles.size; return cancelIdleOf.call(window, id); };
  }
  const watched = new WeakSet();
  const watch = (node) => {
    if (!(node instanceof HTMLScriptElement) || !node.src || watched.has(node)) return;
    watched.add(node);
    loading += 1;
    const done = () => { node.removeEventListener('load', done); node.removeEventListener('error', done); loading -= 1; };
    node.addEventListener('load', done);
    node.addEventListener('error', done);
  };
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      watch(node);
      if (node.querySelectorAll) for (const inner of node.querySelectorAll('script[src]')) watch(inner);
    }
  }).observe(document, { childList: true, subtree: true });
  Object.defineProperty(window, '${PAGE_ACTIVITY}', { value: (withinMs) => {
    const horizon = performance.now() + (Number(withinMs) || 0);
    let due = frames + idles;
    for (const at of timeouts.values()) if (at <= horizon) due += 1;
    let inFlight = 0;
    for (const [url, entry] of open) if (!polled.has(url)) inFlight += entry.inFlight;
    return { inFlight, loading, due, loaded: document.readyState === 'complete' };
  } });
})();`;

/** A request in the route handler: at its gate until admitted, then being made, then answered (in the log, handed to the browser). */
interface Pending {
  readonly url: string;
  readonly resourceType: string;
  atGate: boolean;
  answered: boolean;
  /** Asks for the same URL the page made while this request was unanswered. */
  repeats: number;
}

/**
 * The page's requests in flight through the route handler ("network idle" as
 * crawlq sees it), and how long any of them waited at its gate.
 */
class Activity {
  readonly #pending = new Set<Pending>();
  /** Requests of URLs the page polls: not waited for, only logged. */
  readonly #polls = new Set<Pending>();
  #lastChange = performance.now();
  #atGate = 0;
  #gateSince = 0;
  #gateWaitedMs = 0;

  /**
   * A request starts (at its gate): `admitted` once it is being made,
   * `answered` once its fate is in the log, `end` once the browser has it
   * (all idempotent).
   */
  begin(url: string, resourceType: string): { admitted: () => void; answered: () => void; end: () => void } {
    const entry: Pending = { url, resourceType, atGate: true, answered: false, repeats: 0 };
    this.#pending.add(entry);
    this.#lastChange = performance.now();
    if (this.#atGate++ === 0) this.#gateSince = performance.now();
    const admitted = (): void => {
      if (!entry.atGate) return;
      entry.atGate = false;
      if (--this.#atGate === 0) this.#gateWaitedMs += performance.now() - this.#gateSince;
    };
    return {
      admitted,
      answered: () => {
        admitted();
        entry.answered = true;
      },
      end: () => {
        admitted();
        if (this.#pending.delete(entry)) this.#lastChange = performance.now();
      },
    };
  }

  /**
   * The page asked for `url` again. Once it has asked {@link POLL_REPEATS}
   * times while the URL's request is unanswered, it is polling: a page that
   * polls never goes idle, and the answer it waits for (a long poll's, a
   * status it refreshes) is not what a crawler reads it for.
   */
  askedAgain(url: string): void {
    for (const entry of this.#pending) {
      if (entry.url !== url || entry.answered || ++entry.repeats < POLL_REPEATS) continue;
      this.#pending.delete(entry);
      this.#polls.add(entry);
      this.#lastChange = performance.now();
    }
  }

  /** How long nothing has been in flight through the route (0 while something is). */
  quietFor(): number {
    return this.#pending.size === 0 ? performance.now() - this.#lastChange : 0;
  }

  /** Something happened on the page (a step): the quiet starts again from now. */
  touch(): void {
    this.#lastChange = performance.now();
  }

  /** Time during which at least one request waited at its gate. */
  gateWaitedMs(): number {
    return this.#gateWaitedMs + (this.#atGate > 0 ? performance.now() - this.#gateSince : 0);
  }

  /** The requests still in flight, as the log records them once the page is done without them. */
  pendingNow(): RenderedRequest[] {
    return [...this.#pending].filter((entry) => !entry.answered).map(({ url, resourceType, atGate }) =>
      atGate ? { url, resourceType, fate: 'deferred', why: 'still waiting for its gate when the page was done' } : { url, resourceType, fate: 'failed', why: 'no response before the page was done' },
    );
  }

  /** The polls still unanswered, as the log records them once the page is done without them. */
  pollsNow(): RenderedRequest[] {
    return [...this.#polls].filter((entry) => !entry.answered).map(({ url, resourceType, atGate }) => ({
      url,
      resourceType,
      fate: atGate ? 'deferred' : 'failed',
      why: `a poll (asked for again while unanswered): the page was done without its answer${atGate ? ', still at its gate' : ''}`,
    }));
  }

  /** True once nothing was in flight for `idleMs`; false when the (moving) deadline came first. */
  async idle(idleMs: number, deadline: () => number, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      const now = performance.now();
      const quietFor = now - this.#lastChange;
      const inFlight = this.#pending.size;
      if (inFlight === 0 && quietFor >= idleMs) return true;
      const end = deadline();
      if (now >= end || signal.aborted) return false;
      const wait = inFlight === 0 ? idleMs - quietFor : 50;
      await sleep(Math.max(10, Math.min(wait, end - now)));
    }
  }
}

/**
 * Runs `wait` (a Playwright wait taking a timeout) in slices of at most a
 * second until it succeeds, or the deadline, which may move back meanwhile,
 * has passed: true when it succeeded.
 */
async function untilBound(wait: (timeoutMs: number) => Promise<unknown>, deadline: () => number): Promise<boolean> {
  for (;;) {
    const left = deadline() - performance.now();
    if (left <= 0) return false;
    try {
      await wait(Math.max(1, Math.min(left, 1_000)));
      return true;
    } catch (error) {
      if (!isTimeout(error)) throw error;
    }
  }
}

function sameDocument(a: string, b: string): boolean {
  const strip = (url: string) => url.replace(/#.*$/, '');
  return strip(a) === strip(b);
}

/** Headers for `route.fulfill`: single-valued, without those that described the wire (the body is decoded). */
function browserHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || WIRE_HEADERS.has(name.toLowerCase())) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}
