import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, Page, Route } from 'playwright-core';
import type { BrowserPool } from './browser-pool.js';
import { BrowserCrashedError } from './render-errors.js';
import { DEFAULT_BLOCKED_TYPES, type RenderedPage, type RenderedRequest, type RenderOptions, type SubrequestAnswer } from './render-types.js';

/** Types that are long-lived streams or side channels: never requested (a crawler's fetch could not end them). */
const NEVER_TYPES = new Set(['eventsource', 'websocket', 'manifest', 'ping']);
/** A page that outlives its bound by this much is hung: its browser is killed. */
const HUNG_AFTER_MS = 30_000;
const DEFAULT_IDLE_MS = 500;
/** Headers that described the bytes on the wire, not the decoded body handed to the browser. */
const WIRE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * Renders one page in a pooled browser. The browser makes no request of its
 * own: the document is the one the caller fetched, and every other request is
 * intercepted and handed to `options.fetch` (the caller's gate decides
 * whether, when and how it is made). Only GET and HEAD are passed on, each
 * URL once per page; a page's POSTs, beacons, streams and polls are blocked. Navigations away from the
 * page are blocked too (their URLs are in the request log).
 *
 * Bounded: loading, waiting and steps end by `timeoutMs`; a browser that
 * does not answer well past it is killed, and the render fails with a
 * {@link BrowserCrashedError}, as it does when the browser dies under it.
 */
export async function renderPage(pool: BrowserPool, options: RenderOptions): Promise<RenderedPage> {
  return pool.withContext(async (context, kill) => {
    const started = performance.now();
    const done = new AbortController();
    const rendering = renderInContext(context, options, { started, signal: done.signal });
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        kill();
        reject(new BrowserCrashedError(`the browser did not finish the page within ${options.timeoutMs + HUNG_AFTER_MS} ms: killed`));
      }, options.timeoutMs + HUNG_AFTER_MS);
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

async function renderInContext(context: BrowserContext, options: RenderOptions, run: { started: number; signal: AbortSignal }): Promise<RenderedPage> {
  const { document } = options;
  const deadline = run.started + options.timeoutMs;
  const remaining = (): number => Math.max(1, deadline - performance.now());
  const blocked = options.blockedTypes ?? DEFAULT_BLOCKED_TYPES;
  const requests: RenderedRequest[] = [];
  const activity = new Activity();
  let documentServed = false;
  // A page asking for the same URL again (polling, a retry loop) learns nothing new from it.
  const asked = new Set<string>();
  // Routed before it navigates: the context's route covers the page from its first request.
  const page: Page = await context.newPage();

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
    asked.add(url);
    if (refusal !== undefined) {
      requests.push({ url, resourceType, fate: 'blocked', why: refusal });
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    activity.begin();
    try {
      let answer: SubrequestAnswer;
      try {
        answer = await options.fetch({ url, method: request.method(), resourceType, navigation: request.isNavigationRequest() }, { signal: run.signal, deadline });
      } catch (error) {
        answer = { fate: 'failed', why: error instanceof Error ? error.message : String(error) };
      }
      if (answer.fate === 'made') {
        requests.push({ url, resourceType, fate: 'made', status: answer.status });
        await route.fulfill({ status: answer.status, headers: browserHeaders(answer.headers), body: answer.body }).catch(() => undefined);
      } else {
        requests.push({ url, resourceType, fate: answer.fate, why: answer.why });
        await route.abort(answer.fate === 'failed' ? 'failed' : 'blockedbyclient').catch(() => undefined);
      }
    } finally {
      activity.end();
    }
  };
  await context.route('**/*', handle);
  // Dialogs would hold the page until someone answers them.
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
  let settled = true;
  try {
    await page.goto(document.url, { waitUntil: 'domcontentloaded', timeout: remaining() });
  } catch (error) {
    if (!isTimeout(error)) throw error;
    settled = false;
  }
  const settle = async (): Promise<boolean> => activity.idle(options.idleMs ?? DEFAULT_IDLE_MS, deadline, run.signal);
  if (settled) {
    if (options.waitFor === undefined) settled = await settle();
    else settled = await waitForSelector(page, options.waitFor, remaining());
  }
  let steps = 0;
  for (let click = 0; options.clickSelector !== undefined && click < (options.clickSteps ?? 0) && performance.now() < deadline; click += 1) {
    const button = page.locator(options.clickSelector).first();
    if (!(await button.isVisible().catch(() => false))) break;
    const clicked = await button.click({ timeout: remaining() }).then(() => true, () => false);
    // Even a click that timed out may have set requests going: they are waited for.
    settled = await settle();
    if (!clicked) break;
    steps += 1;
  }
  for (let scroll = 0; scroll < (options.scrollSteps ?? 0) && performance.now() < deadline; scroll += 1) {
    const before = await page.evaluate<number>('document.documentElement.scrollHeight');
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    steps += 1;
    settled = await settle();
    if ((await page.evaluate<number>('document.documentElement.scrollHeight')) <= before) break;
  }
  const html = await page.content();
  const title = await page.title();
  const textLength = await page.evaluate<number>('document.body ? document.body.innerText.length : 0');
  if (options.screenshotPath !== undefined) await page.screenshot({ path: options.screenshotPath, timeout: Math.max(remaining(), 2_000) });
  return { html, title, textLength, requests, settled, steps, renderMs: Math.round(performance.now() - run.started) };
}

/** Requests in flight through the route handler: "network idle" as crawlq sees it. */
class Activity {
  #inFlight = 0;
  #lastChange = performance.now();

  begin(): void {
    this.#inFlight += 1;
    this.#lastChange = performance.now();
  }

  end(): void {
    this.#inFlight -= 1;
    this.#lastChange = performance.now();
  }

  /** True once nothing was in flight for `idleMs`; false when the deadline came first. */
  async idle(idleMs: number, deadline: number, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      const now = performance.now();
      const quietFor = now - this.#lastChange;
      if (this.#inFlight === 0 && quietFor >= idleMs) return true;
      if (now >= deadline || signal.aborted) return false;
      const wait = this.#inFlight === 0 ? idleMs - quietFor : 50;
      await sleep(Math.max(10, Math.min(wait, deadline - now)));
    }
  }
}

/** True once `selector` is in the DOM; false when `timeoutMs` came first. */
async function waitForSelector(page: Page, selector: string, timeoutMs: number): Promise<boolean> {
  try {
    await page.waitForSelector(selector, { timeout: timeoutMs, state: 'attached' });
    return true;
  } catch (error) {
    if (isTimeout(error)) return false;
    throw error;
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
