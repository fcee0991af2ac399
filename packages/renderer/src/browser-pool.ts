import type { Browser, BrowserContext, CDPSession, Page, Route } from 'playwright-core';
import { CHROMIUM_FLAGS, findChromium } from './chromium-launch.js';
import { childPids, treeMemoryBytes, treePids } from './process-tree.js';
import { BrowserCrashedError, BrowserUnavailableError } from './errors.js';

/** How a worker's browsers are run. */
export interface BrowserPoolOptions {
  /** Chromium to start; unset: the system one (see `findChromium`). */
  readonly executablePath?: string | undefined;
  /** Pages rendered at once (one browser, a context of its own per page slot). */
  readonly pages: number;
  /** A browser is replaced after rendering this many pages (Chromium's memory only grows). */
  readonly restartAfterPages: number;
  /** A browser whose processes hold more than this (proportional set size, all of them) is replaced after its current pages. */
  readonly maxMemoryBytes: number;
  /** Navigation user agent (the same as the fetcher's, so robots.txt groups match). */
  readonly userAgent?: string | undefined;
  /**
   * A browser that takes longer than this to open a tab (a context, its page,
   * its init script) is wedged, not slow: it is killed and the page fails as
   * crashed (retried). A new browser's first tabs have the launch's bound
   * instead: they start its renderer processes, as slow on a loaded machine
   * as the launch itself. @default OPEN_TAB_WITHIN_MS
   */
  readonly openTabWithinMs?: number | undefined;
  readonly log?: (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;
}

/** What a pool has done so far (for metrics, tests and the benchmark). */
export interface BrowserPoolStats {
  readonly launches: number;
  readonly crashes: number;
  readonly restarts: number;
  readonly pages: number;
  /** Pages rendered in a tab a page before them used (cleared in between), rather than a new context and page. */
  readonly reused: number;
}

/**
 * A context with one page, kept for the next page once cleared. Routed once
 * for its life: every request of its pages goes to `handler`, the render in
 * progress; between renders there is none and every request is refused, so
 * no request of a page being left ever reaches the network unseen.
 */
export interface BrowserTab {
  readonly context: BrowserContext;
  readonly page: Page;
  handler: ((route: Route) => Promise<void>) | undefined;
}

/** A tab and the browser it lives in. */
interface Tab extends BrowserTab {
  readonly instance: Instance;
  readonly cdp: CDPSession;
}

/** One running browser and what it carries. */
interface Instance {
  readonly browser: Browser;
  /** The process the pool started (the launcher script or Chromium itself); its tree is the browser. */
  readonly pid: number | undefined;
  active: number;
  served: number;
  /** Whether a tab has opened in it yet (until then a tab is bounded like the launch). */
  opened: boolean;
  retired: boolean;
  dead: boolean;
}

const CLOSE_WITHIN_MS = 5_000;
/**
 * See BrowserPoolOptions.openTabWithinMs. Seen: after every browser process
 * of a crawl was killed at once, a job stayed active for minutes with nothing
 * in flight; the opening of a tab was the one step of a page with no bound.
 */
const OPEN_TAB_WITHIN_MS = 30_000;
/** Chromium's start, bounded (Playwright's own default waits 3 minutes). */
const LAUNCH_WITHIN_MS = 60_000;
/** Clearing a tab for its next page takes a navigation to about:blank and a few calls: a browser that takes longer is not trusted with it. */
const CLEAR_WITHIN_MS = 5_000;
/** How long a page's "target closed" error waits to see whether its whole browser went. */
const DISCONNECT_WITHIN_MS = 2_000;
const CLOSED_TARGET = /target (page, context or browser )?(has been )?closed|browser has been closed|target crashed|browser closed/i;

/**
 * The browsers of one worker process: at most `pages` pages at once, in one
 * Chromium at a time. Each page slot has a context of its own with one page
 * (a tab), kept from one page to the next: opening a context and a page
 * costs a renderer process and a dozen protocol calls, more than most pages'
 * rendering. Between two pages the tab is cleared, so nothing of one page
 * reaches the next: its requests are refused, it navigates to about:blank,
 * any window the page opened is closed, and the cookies, storage
 * (local, session, IndexedDB, cache storage) of the origins it had are
 * deleted, and its renderer's heap is collected; the HTTP cache is not used
 * (every request is routed). A tab that cannot be cleared, or whose page
 * ended in an error, is closed and the next page gets a new one. A browser
 * is retired after `restartAfterPages` pages or past `maxMemoryBytes`, and
 * closed once its last page ends; one that crashed is replaced at the next
 * page. Only the page that was in it pays: its render fails with a
 * {@link BrowserCrashedError}.
 */
export class BrowserPool {
  readonly #options: BrowserPoolOptions;
  readonly #executablePath: string;
  #current: Instance | undefined;
  #launching: Promise<Instance> | undefined;
  readonly #instances = new Set<Instance>();
  #free: number;
  readonly #waiting: (() => void)[] = [];
  #idle: Tab[] = [];
  #closed = false;
  #stats = { launches: 0, crashes: 0, restarts: 0, pages: 0, reused: 0 };

  constructor(options: BrowserPoolOptions) {
    this.#options = options;
    this.#free = options.pages;
    this.#executablePath = findChromium(options.executablePath) ?? options.executablePath ?? '/usr/bin/chromium';
  }

  get stats(): BrowserPoolStats {
    return { ...this.#stats };
  }

  /** Process ids of the browsers running now (each the root of its process tree). */
  get pids(): readonly number[] {
    return [...this.#instances].flatMap((instance) => (instance.pid === undefined || instance.dead ? [] : [instance.pid]));
  }

  /**
   * Runs `use` with a tab of a live browser (a cleared one kept from an
   * earlier page, or a new one `setup` is run on first), once a page slot is
   * free. A browser that died meanwhile turns whatever `use` threw into a
   * {@link BrowserCrashedError}. `kill`: ends the whole browser at once (a
   * page that hangs past its bound).
   */
  async withTab<T>(setup: (page: Page) => Promise<void>, use: (tab: BrowserTab, kill: () => void) => Promise<T>): Promise<T> {
    await this.#takeSlot();
    let instance: Instance | undefined;
    try {
      instance = await this.#instance();
      instance.active += 1;
      const running = instance;
      let tab: Tab;
      try {
        const kept = this.#takeIdle(running);
        if (kept) this.#stats.reused += 1;
        tab = kept ?? (await this.#openTabWithin(running, setup));
      } catch (error) {
        throw await this.#crashOr(running, error);
      }
      let ended = false;
      try {
        const result = await use(tab, () => this.#kill(running));
        ended = true;
        return result;
      } catch (error) {
        throw await this.#crashOr(running, error);
      } finally {
        tab.handler = undefined;
        // A dead browser's tab needs no closing (and would wait for it).
        if (!running.dead) await this.#keepOrClose(tab, ended);
      }
    } finally {
      if (instance) this.#pageEnded(instance);
      this.#giveSlot();
    }
  }

  /** Closes every browser (pages still running fail as crashed). */
  async close(): Promise<void> {
    this.#closed = true;
    const launching = this.#launching;
    if (launching) await launching.catch(() => undefined);
    await Promise.all([...this.#instances].map((instance) => this.#shutdown(instance)));
  }

  #takeIdle(instance: Instance): Tab | undefined {
    // Tabs of other browsers (retired, dead) are theirs to close.
    this.#idle = this.#idle.filter((tab) => !tab.instance.dead && !tab.instance.retired);
    const index = this.#idle.findIndex((tab) => tab.instance === instance && !tab.page.isClosed());
    if (index < 0) return undefined;
    const [tab] = this.#idle.splice(index, 1);
    return tab;
  }

  /** Opens a tab, or kills a browser that does not open one in time (see BrowserPoolOptions.openTabWithinMs). */
  async #openTabWithin(instance: Instance, setup: (page: Page) => Promise<void>): Promise<Tab> {
    const tabWithinMs = this.#options.openTabWithinMs ?? OPEN_TAB_WITHIN_MS;
    const limitMs = instance.opened ? tabWithinMs : Math.max(tabWithinMs, LAUNCH_WITHIN_MS);
    const opening = this.#openTab(instance, setup);
    try {
      const tab = await withinMs(opening, limitMs);
      instance.opened = true;
      return tab;
    } catch (error) {
      if (!(error instanceof NoAnswer)) throw error;
      // Should it open after all, its context goes with the killed browser; closed here in case.
      void opening.then((late) => withinMs(late.context.close(), CLOSE_WITHIN_MS)).catch(() => undefined);
      this.#kill(instance);
      this.#options.log?.(`the browser (pid ${instance.pid ?? '?'}) did not open a page within ${limitMs} ms: killed; the next page starts a new one`, 'warn');
      throw new BrowserCrashedError(`the browser did not open a page within ${limitMs} ms: killed`, { cause: error });
    }
  }

  async #openTab(instance: Instance, setup: (page: Page) => Promise<void>): Promise<Tab> {
    const context = await instance.browser.newContext({ ...(this.#options.userAgent === undefined ? {} : { userAgent: this.#options.userAgent }), serviceWorkers: 'block' });
    try {
      const holder: { tab?: Tab } = {};
      // Routed before its page exists: the route covers the page (and any window it opens) from its first request.
      await context.route('**/*', async (route) => {
        const handler = holder.tab?.handler;
        if (handler) return handler(route);
        await route.abort('blockedbyclient').catch(() => undefined);
      });
      const page = await context.newPage();
      // Dialogs would hold the page until someone answers them.
      page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
      await setup(page);
      const tab: Tab = { instance, context, page, handler: undefined, cdp: await context.newCDPSession(page) };
      holder.tab = tab;
      return tab;
    } catch (error) {
      await withinMs(context.close(), CLOSE_WITHIN_MS).catch(() => undefined);
      throw error;
    }
  }

  /** A tab whose page ended well is cleared and kept for the next page; any other is closed. */
  async #keepOrClose(tab: Tab, ended: boolean): Promise<void> {
    const { instance } = tab;
    if (ended && !instance.retired && !this.#closed) {
      try {
        await withinMs(clearTab(tab), CLEAR_WITHIN_MS);
        if (!instance.dead && !instance.retired && !this.#closed) {
          this.#idle.push(tab);
          return;
        }
      } catch (error) {
        this.#options.log?.(`could not clear a browser tab for its next page (${errorText(error)}): a new one is opened`, 'debug');
      }
    }
    if (!instance.dead) await withinMs(tab.context.close(), CLOSE_WITHIN_MS).catch(() => undefined);
  }

  async #crashOr(instance: Instance, error: unknown): Promise<unknown> {
    // A page whose browser was killed may fail ("target closed") a moment
    // before the browser's connection is seen to drop: that moment is waited for.
    if (!instance.dead && instance.browser.isConnected() && CLOSED_TARGET.test(errorText(error))) await disconnected(instance.browser, DISCONNECT_WITHIN_MS);
    if (!instance.dead && instance.browser.isConnected()) return error;
    return error instanceof BrowserCrashedError ? error : new BrowserCrashedError(`the browser died while it had the page (${errorText(error)})`, { cause: error });
  }

  async #takeSlot(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #giveSlot(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free += 1;
  }

  async #instance(): Promise<Instance> {
    if (this.#closed) throw new BrowserCrashedError('the browser pool is closed');
    const current = this.#current;
    if (current && !current.dead && !current.retired) return current;
    this.#launching ??= this.#launch().finally(() => (this.#launching = undefined));
    return this.#launching;
  }

  async #launch(): Promise<Instance> {
    const before = new Set(childPids(process.pid));
    let browser: Browser;
    try {
      // Loaded with the first browser: a worker that renders nothing never loads playwright-core.
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: this.#executablePath, headless: true, args: [...CHROMIUM_FLAGS.args], ignoreDefaultArgs: [...CHROMIUM_FLAGS.ignoreDefaultArgs], chromiumSandbox: false, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false, timeout: LAUNCH_WITHIN_MS });
    } catch (error) {
      if (findChromium(this.#executablePath) === undefined) throw new BrowserUnavailableError(this.#executablePath, { cause: error });
      throw new BrowserCrashedError(`the browser did not start (${errorText(error)})`, { cause: error });
    }
    // Launches are one at a time, so the one new child process is this browser.
    const pid = childPids(process.pid).find((candidate) => !before.has(candidate));
    const instance: Instance = { browser, pid, active: 0, served: 0, opened: false, retired: false, dead: false };
    browser.on('disconnected', () => {
      if (!instance.dead && !instance.retired && !this.#closed) {
        this.#stats.crashes += 1;
        this.#options.log?.(`the browser (pid ${pid ?? '?'}) died with ${instance.active} page(s) in it; the next page starts a new one`, 'warn');
      }
      instance.dead = true;
      this.#instances.delete(instance);
      this.#idle = this.#idle.filter((tab) => tab.instance !== instance);
      if (this.#current === instance) this.#current = undefined;
      // Whatever is left of its process tree goes too.
      if (pid !== undefined) killTree(pid);
    });
    this.#stats.launches += 1;
    this.#instances.add(instance);
    this.#current = instance;
    return instance;
  }

  #pageEnded(instance: Instance): void {
    instance.active -= 1;
    instance.served += 1;
    this.#stats.pages += 1;
    if (!instance.retired && !instance.dead) {
      const tooOld = instance.served >= this.#options.restartAfterPages;
      const tooBig = instance.pid !== undefined && instance.served % 5 === 0 && treeMemoryBytes(instance.pid) > this.#options.maxMemoryBytes;
      if (tooOld || tooBig) {
        instance.retired = true;
        this.#stats.restarts += 1;
        if (this.#current === instance) this.#current = undefined;
        this.#options.log?.(`restarting the browser after ${instance.served} pages${tooBig ? ' (over its memory cap)' : ''}`, 'debug');
      }
    }
    if (instance.retired && instance.active === 0) void this.#shutdown(instance);
  }

  #kill(instance: Instance): void {
    if (instance.dead) return;
    instance.dead = true;
    this.#stats.crashes += 1;
    if (this.#current === instance) this.#current = undefined;
    if (instance.pid !== undefined) killTree(instance.pid);
    void instance.browser.close().catch(() => undefined);
  }

  async #shutdown(instance: Instance): Promise<void> {
    const wasDead = instance.dead;
    instance.retired = true;
    this.#instances.delete(instance);
    this.#idle = this.#idle.filter((tab) => tab.instance !== instance);
    if (!wasDead) await withinMs(instance.browser.close(), CLOSE_WITHIN_MS).catch(() => undefined);
    instance.dead = true;
    if (instance.pid !== undefined) killTree(instance.pid);
  }
}

/**
 * Leaves nothing of a page for the next one in its tab: its requests refused
 * from now on, its session storage emptied, about:blank in its place (the
 * page's scripts and timers end with it), the windows it opened closed, and
 * the cookies and stored data of every origin it had deleted, and what it
 * left in the renderer's heap collected.
 */
async function clearTab(tab: Tab): Promise<void> {
  tab.handler = undefined;
  const { page, context } = tab;
  const frames = page.frames();
  const origins = new Set(frames.map((frame) => originOf(frame.url())).filter((origin) => origin !== undefined));
  // Session storage belongs to the tab, so it would outlive the context's data: emptied from inside each frame.
  await Promise.all(frames.map((frame) => frame.evaluate('try { sessionStorage.clear(); } catch {}').catch(() => undefined)));
  await page.goto('about:blank', { timeout: CLEAR_WITHIN_MS });
  await Promise.all(context.pages().filter((other) => other !== page).map((other) => other.close()));
  await context.clearCookies();
  for (const origin of origins) await tab.cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
  // What the page left in its renderer's heap is garbage now, but an idle
  // renderer keeps it: a kept tab's process held about 25 MB more than a new
  // one's after a dozen pages. One full collection here, while the slot has
  // no page, costs milliseconds.
  await tab.cdp.send('HeapProfiler.collectGarbage');
}

function originOf(url: string): string | undefined {
  try {
    const { origin, protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:' ? origin : undefined;
  } catch {
    return undefined;
  }
}

/** SIGKILL to a process and every descendant (a browser's renderers and helpers). */
function killTree(pid: number): void {
  for (const target of treePids(pid)) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** Resolves once `browser` disconnects, or after `ms`. */
async function disconnected(browser: Browser, ms: number): Promise<void> {
  if (!browser.isConnected()) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      browser.off('disconnected', done);
      resolve();
    }
    browser.on('disconnected', done);
  });
}

/** A browser call that did not answer within its bound. */
class NoAnswer extends Error {}

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswer(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
