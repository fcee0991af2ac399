import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserCrashedError, BrowserPool, renderPage } from '../src/index.js';
import { childPids, treePids } from '../src/process-tree.js';
import { alive, chromium, documentOf, plainFetch } from './browser-support.js';

// How a pool keeps its browsers: a hung one killed, a crashed one replaced,
// restarts after a number of pages or past a memory cap. Only the page that
// was in a browser pays for it.

let site: SpaSite;
let pool: BrowserPool;

beforeAll(async () => {
  site = await startSpaSite({ appHost: '127.0.0.94', scriptHost: '127.0.0.95', staticHost: '127.0.0.96' });
  pool = new BrowserPool({ pages: 2, restartAfterPages: 3, maxMemoryBytes: 2 ** 31 });
});
afterAll(async () => {
  await pool?.close();
  await site?.close();
});

describe.skipIf(chromium === undefined)('a hung or crashed browser', () => {
  it('a browser that does not open a tab in time (its processes stopped) is killed: that page fails as crashed, the next gets a new browser', { timeout: 120_000 }, async () => {
    const logged: string[] = [];
    // The bound must leave room for a live browser on a loaded machine (opening a tab took over 2 s there): only the stopped one may miss it.
    const wedged = new BrowserPool({ pages: 1, restartAfterPages: 100, maxMemoryBytes: 2 ** 31, openTabWithinMs: 12_000, log: (line) => logged.push(line) });
    const noSetup = () => Promise.resolve();
    try {
      // A first page whose use fails: its tab is closed, not kept, so the next page opens one.
      await expect(wedged.withTab(noSetup, () => Promise.reject(new Error('not this page')))).rejects.toThrow('not this page');
      const [root] = wedged.pids;
      expect(root).toBeDefined();
      const tree = treePids(root!);
      // The browser's own process first; a helper that exits meanwhile (they come and go) needs no stopping.
      process.kill(root!, 'SIGSTOP');
      for (const pid of tree.slice(1)) {
        try {
          process.kill(pid, 'SIGSTOP');
        } catch {
          // gone already
        }
      }
      const asked = performance.now();
      await expect(wedged.withTab(noSetup, () => Promise.resolve('opened'))).rejects.toBeInstanceOf(BrowserCrashedError);
      // Failed at its bound, not at some later one: a stopped browser never answers.
      expect(performance.now() - asked).toBeGreaterThanOrEqual(12_000);
      expect(logged.join('\n')).toMatch(/did not open a page within 12000 ms: killed/);
      // The stopped browser is gone (SIGKILL ends a stopped process too), and the next page runs in a new one.
      await waitFor(() => !alive(root!), { what: 'the stopped browser to be killed', timeoutMs: 10_000, intervalMs: 50 });
      await expect(wedged.withTab(noSetup, (tab) => tab.page.evaluate('1 + 1'))).resolves.toBe(2);
      expect(wedged.stats.launches).toBe(2);
    } finally {
      await wedged.close();
    }
  });

  it("a new browser's first tab has the launch's bound, later tabs the tab bound", { timeout: 120_000 }, async () => {
    // A bound no live browser meets for a later tab: only the first may open.
    const strict = new BrowserPool({ pages: 1, restartAfterPages: 100, maxMemoryBytes: 2 ** 31, openTabWithinMs: 1 });
    const noSetup = () => Promise.resolve();
    try {
      let firstRan = false;
      const first = strict.withTab(noSetup, () => {
        firstRan = true;
        // Failing use closes the tab, so the next page must open one.
        return Promise.reject(new Error('not kept'));
      });
      await expect(first).rejects.toThrow('not kept');
      expect(firstRan).toBe(true);
      await expect(strict.withTab(noSetup, () => Promise.resolve('opened'))).rejects.toBeInstanceOf(BrowserCrashedError);
      // The killed browser's successor opens its first tab under the launch's bound again.
      await expect(strict.withTab(noSetup, (tab) => tab.page.evaluate('2 + 2'))).resolves.toBe(4);
      expect(strict.stats.launches).toBe(2);
    } finally {
      await strict.close();
    }
  });

  it('a browser killed mid-page fails that render as crashed; the next render gets a new browser', { timeout: 60_000 }, async () => {
    const launches = pool.stats.launches;
    const url = site.appUrls[2] ?? '';
    let killed = false;
    const rendering = renderPage(pool, {
      document: await documentOf(url),
      fetch: async (request) => {
        if (!killed) {
          killed = true;
          // The browser's own process tree: every child of the pool's browser roots.
          for (const pid of pool.pids) for (const target of [pid, ...childPids(pid)]) process.kill(target, 'SIGKILL');
        }
        return plainFetch(request);
      },
      timeoutMs: 15_000,
    });
    await expect(rendering).rejects.toBeInstanceOf(BrowserCrashedError);
    const again = await renderPage(pool, { document: await documentOf(url), fetch: plainFetch, timeoutMs: 15_000 });
    expect(again.title).toBe('App page /app/2');
    expect(pool.stats.launches).toBeGreaterThan(launches);
  });
});

describe.skipIf(chromium === undefined)('browser restarts', () => {
  it('a browser is replaced after --browser-restart-pages pages: the old one is gone, the next page gets a new one', { timeout: 90_000 }, async () => {
    const restarting = new BrowserPool({ pages: 1, restartAfterPages: 2, maxMemoryBytes: 2 ** 40 });
    try {
      const url = site.staticUrls[0] ?? '';
      await renderPage(restarting, { document: await documentOf(url), fetch: plainFetch, timeoutMs: 10_000 });
      const [first] = restarting.pids;
      expect(first).toBeDefined();
      await renderPage(restarting, { document: await documentOf(url), fetch: plainFetch, timeoutMs: 10_000 });
      // Retired after its second page, and closed once that page ended.
      await expect.poll(() => alive(first ?? -1), { timeout: 15_000 }).toBe(false);
      const third = await renderPage(restarting, { document: await documentOf(url), fetch: plainFetch, timeoutMs: 10_000 });
      expect(third.title).toBe('Static page 0');
      expect(restarting.pids).not.toContain(first);
      expect(restarting.stats).toMatchObject({ launches: 2, restarts: 1, crashes: 0, pages: 3 });
    } finally {
      await restarting.close();
    }
  });

  it('a browser past --browser-max-memory is replaced (its memory is checked every fifth page)', { timeout: 120_000 }, async () => {
    const lines: string[] = [];
    // Any Chromium holds more than 1 MB: the cap is passed at the first check.
    const capped = new BrowserPool({ pages: 1, restartAfterPages: 1_000, maxMemoryBytes: 1_000_000, log: (line) => lines.push(line) });
    try {
      const url = site.staticUrls[1] ?? '';
      for (let page = 0; page < 5; page += 1) await renderPage(capped, { document: await documentOf(url), fetch: plainFetch, timeoutMs: 10_000 });
      expect(capped.stats).toMatchObject({ launches: 1, restarts: 1 });
      expect(lines.some((line) => /after 5 pages \(over its memory cap\)/.test(line))).toBe(true);
      await renderPage(capped, { document: await documentOf(url), fetch: plainFetch, timeoutMs: 10_000 });
      expect(capped.stats).toMatchObject({ launches: 2, restarts: 1, crashes: 0, pages: 6 });
    } finally {
      await capped.close();
    }
    // Closing the pool ends its browsers.
    expect(capped.pids).toEqual([]);
  });
});
