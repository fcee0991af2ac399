import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEED_CHUNKS, startSpaSite, type SpaSite } from '@crawlq/demo-site';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool, renderPage, type FetchedDocument } from '../src/index.js';
import { chromium, documentOf, linksOf, plainFetch } from './browser-support.js';

// Rendering in the system Chromium: waits, steps, what a page may request.
// How the pool keeps its browsers alive (restarts, crashes, hangs) is in
// browser-lifecycle.test.ts, a file of its own so the two run side by side.

let site: SpaSite;
let pool: BrowserPool;

beforeAll(async () => {
  site = await startSpaSite({ appHost: '127.0.0.91', scriptHost: '127.0.0.92', staticHost: '127.0.0.93' });
  pool = new BrowserPool({ pages: 2, restartAfterPages: 3, maxMemoryBytes: 2 ** 31 });
});
afterAll(async () => {
  await pool?.close();
  await site?.close();
});
describe.skipIf(chromium === undefined)('renderPage in the system Chromium', () => {
  it('renders an app page from its script and XHR, clicks "load more", and the browser itself requests nothing', { timeout: 60_000 }, async () => {
    const url = site.appUrls[1] ?? '';
    const before = site.requests.length;
    const seen: string[] = [];
    const page = await renderPage(pool, {
      document: await documentOf(url),
      fetch: async (request) => {
        seen.push(request.url);
        return plainFetch(request);
      },
      timeoutMs: 15_000,
      clickSelector: '#more',
      clickSteps: 2,
    });
    expect(page.title).toBe('App page /app/1');
    expect(new Set(linksOf(page.html))).toEqual(new Set(site.expectedLinks(url)));
    expect(page.steps).toBe(1);
    expect(page.settled).toBe(true);
    // The document once (ours), then the script, the XHR and the "load more" XHR: each handed to the caller.
    expect(seen).toEqual([`${site.scriptOrigin}/app.js`, `${site.appOrigin}/api/app/1`, `${site.appOrigin}/api/app/1/more`]);
    expect(site.requests.length - before).toBe(1 + seen.length);
    expect(page.requests.map((request) => request.fate)).toEqual(['made', 'made', 'made']);
  });

  describe('settling sooner than network idle, only when the page has nothing left to do', () => {
    // A long idle time: a render that ends before it was ended by the page's own account, not by network idle.
    const IDLE_MS = 8_000;
    /** A document of the app host whose inline script runs `body`; `api(path)` fetches from the app host and adds the links it returns. */
    const pageWith = (path: string, script: string): FetchedDocument => ({
      url: `${site.appOrigin}${path}`,
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: Buffer.from(`<!doctype html><html><head><title>t</title></head><body><ul id="links"></ul><p id="clock"></p><script>
        const add = (links) => { for (const href of links) { const a = document.createElement('a'); a.href = href; a.textContent = href; document.getElementById('links').append(a); } };
        const api = (path) => fetch(path).then((response) => response.json()).then((data) => add(data.links));
        ${script}
      </script></body></html>`),
    });

    it('a page that loaded with nothing pending settles before the idle time, even with a clock ticking (intervals are not waited for)', { timeout: 60_000 }, async () => {
      const page = await renderPage(pool, { document: pageWith('/app/1', "setInterval(() => { document.getElementById('clock').textContent = String(Date.now()); }, 50);"), fetch: plainFetch, timeoutMs: 30_000, idleMs: IDLE_MS });
      expect(page.settled).toBe(true);
      expect(page.renderMs).toBeLessThan(IDLE_MS);
    });

    it('a timeout, an animation frame or an idle callback due within the idle time is waited for, and the requests it starts too', { timeout: 90_000 }, async () => {
      const scheduled = {
        timeout: "setTimeout(() => api('/api/app/2'), 600);",
        // Chains longer than the short quiet the quicker rule asks of the route: only the count of what is due keeps the render going.
        frame: "let frames = 40; const frame = () => (--frames > 0 ? requestAnimationFrame(frame) : api('/api/app/2')); requestAnimationFrame(frame);",
        idle: "let idles = 40; const idle = () => (--idles > 0 ? requestIdleCallback(idle) : api('/api/app/2')); requestIdleCallback(idle);",
        // A script element added later (the app's own script, which fetches the page's API): what it starts is waited for.
        script: "setTimeout(() => { const s = document.createElement('script'); s.src = '" + site.scriptOrigin + "/app.js'; document.head.append(s); }, 0);",
      };
      for (const [how, script] of Object.entries(scheduled)) {
        const page = await renderPage(pool, { document: pageWith('/app/2', how === 'script' ? `document.body.insertAdjacentHTML('beforeend', '<main id="app"></main><button id="more" hidden></button>'); ${script}` : script), fetch: plainFetch, timeoutMs: 30_000, idleMs: IDLE_MS });
        expect(page.settled, how).toBe(true);
        // The links the API answers with are in the DOM: the render did not end between the scheduling and the request.
        expect(linksOf(page.html), how).toEqual(expect.arrayContaining(site.expectedLinks(`${site.appOrigin}/app/2`).slice(0, 1)));
        expect(page.renderMs, how).toBeLessThan(IDLE_MS);
      }
    });

    it("a page polling a URL (asking for it again and again while it is unanswered) settles with its content, not waiting for the poll's answer", { timeout: 60_000 }, async () => {
      // The server answers the live page's poll only after PING_ANSWER_MS, longer than the quiet asked for here would allow.
      const page = await renderPage(pool, { document: await documentOf(site.liveUrl), fetch: plainFetch, timeoutMs: 30_000, idleMs: 2_000 });
      expect(page.settled).toBe(true);
      expect(page.title).toBe('App page /app/live');
      expect(new Set(linksOf(page.html))).toEqual(new Set(site.expectedLinks(site.liveUrl)));
      const polls = page.requests.filter((request) => request.url.endsWith('/api/ping'));
      // The first ask went to the caller's fetch and was still unanswered when the page was done; the asks after it were refused.
      const unanswered = polls.filter((request) => request.fate !== 'blocked');
      expect(unanswered).toHaveLength(1);
      expect(unanswered[0]?.why).toMatch(/^a poll \(asked for again while unanswered\)/);
      expect(polls.filter((request) => request.fate === 'blocked').length).toBeGreaterThanOrEqual(2);
      expect(polls.filter((request) => request.fate === 'blocked').every((request) => request.why === 'asked for again (polling)')).toBe(true);
      // Not content the page went without.
      expect(page.missing).toEqual([]);
    });

    it('a URL asked for twice at once (two parts of a page wanting the same data) is still waited for', { timeout: 60_000 }, async () => {
      // The answer comes well after the short quiet the quicker rule needs, well before the idle time.
      const slowFetch = async (request: Parameters<typeof plainFetch>[0]) => {
        if (request.url.endsWith('/api/app/4')) await new Promise((resolve) => setTimeout(resolve, 1_500));
        return plainFetch(request);
      };
      const page = await renderPage(pool, { document: pageWith('/app/4', "api('/api/app/4'); fetch('/api/app/4').catch(() => {});"), fetch: slowFetch, timeoutMs: 30_000, idleMs: IDLE_MS });
      expect(page.settled).toBe(true);
      expect(linksOf(page.html)).toEqual(expect.arrayContaining(site.expectedLinks(`${site.appOrigin}/app/4`).slice(0, 1)));
      expect(page.requests.filter((request) => request.url.endsWith('/api/app/4')).map((request) => request.fate).sort()).toEqual(['blocked', 'made']);
    });

    it('a timeout due after the idle time is not waited for (network idle would not wait for it either)', { timeout: 60_000 }, async () => {
      const page = await renderPage(pool, { document: pageWith('/app/3', "setTimeout(() => api('/api/app/3'), 60000);"), fetch: plainFetch, timeoutMs: 30_000, idleMs: 1_000 });
      expect(page.settled).toBe(true);
      expect(linksOf(page.html)).toEqual([]);
    });
  });

  it('a tab is kept from one page to the next, and nothing of a page reaches the next: cookies, local and session storage are gone', { timeout: 60_000 }, async () => {
    const single = new BrowserPool({ pages: 1, restartAfterPages: 100, maxMemoryBytes: 2 ** 31 });
    // Served by the route from the document handed over: the browser never connects to this address.
    const origin = 'http://127.0.0.94:9';
    const html = (script: string) => Buffer.from(`<!doctype html><html><head><title>-</title></head><body><script>${script}</script></body></html>`);
    const readState = "document.title = [document.cookie, localStorage.getItem('kept'), sessionStorage.getItem('kept')].map(String).join('|');";
    const render = (path: string, script: string) =>
      renderPage(single, {
        document: { url: `${origin}${path}`, status: 200, headers: { 'content-type': 'text/html' }, body: html(script) },
        fetch: () => Promise.resolve({ fate: 'blocked', why: 'none here' }),
        timeoutMs: 10_000,
        idleMs: 100,
      });
    try {
      const first = await render('/a', `document.cookie = 'kept=1; path=/'; localStorage.setItem('kept', '1'); sessionStorage.setItem('kept', '1'); ${readState}`);
      // The page itself saw what it stored: the next one would too, were the tab not cleared.
      expect(first.title).toBe('kept=1|1|1');
      const second = await render('/b', readState);
      expect(second.title).toBe('|null|null');
      expect(single.stats).toMatchObject({ launches: 1, pages: 2, reused: 1 });
    } finally {
      await single.close();
    }
  });

  it("a kept tab's renderer does not carry the last page's heap: what the page held is collected before the next page", { timeout: 60_000 }, async () => {
    const single = new BrowserPool({ pages: 1, restartAfterPages: 100, maxMemoryBytes: 2 ** 31 });
    const origin = 'http://127.0.0.94:9';
    const heapUsed = async (page: Page) => {
      const cdp = await page.context().newCDPSession(page);
      try {
        return ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize;
      } finally {
        await cdp.detach();
      }
    };
    try {
      // About 64 MB of numbers kept by the page's window until it is left.
      const script = 'window.kept = Array.from({ length: 8e6 }, (_, i) => i + 0.5); document.title = String(window.kept.length);';
      const first = await renderPage(single, {
        document: { url: `${origin}/big`, status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from(`<!doctype html><title>-</title><script>${script}</script>`) },
        fetch: () => Promise.resolve({ fate: 'blocked', why: 'none here' }),
        timeoutMs: 10_000,
        idleMs: 100,
      });
      expect(first.title).toBe('8000000');
      // The same tab, cleared, before anything of the next page runs in it.
      const used = await single.withTab(() => Promise.resolve(), (tab) => heapUsed(tab.page));
      expect(single.stats).toMatchObject({ launches: 1, reused: 1 });
      expect(used).toBeLessThan(16 * 2 ** 20);
    } finally {
      await single.close();
    }
  });

  it('a page that never settles (a new URL each poll) ends at its bound, with what it has', { timeout: 60_000 }, async () => {
    const page = await renderPage(pool, {
      document: await documentOf(site.busyUrl),
      // No poll's answer comes before the page is done (a gate that does not admit them in time).
      fetch: async (request, { signal }) => {
        if (!request.url.includes('/api/ping')) return plainFetch(request);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return { fate: 'deferred', why: 'not admitted in time' };
      },
      timeoutMs: 8_000,
      // Generous: the first poll must reach the route before a quiet this long (the page starts it right after its content).
      idleMs: 2_000,
    });
    expect(page.settled).toBe(false);
    expect(page.title).toBe('App page /app/busy');
    expect(page.renderMs).toBeGreaterThanOrEqual(8_000);
    const polls = page.requests.filter((request) => request.url.includes('/api/ping'));
    // Each a URL of its own: each went to the gate, and none came back.
    expect(polls.length).toBeGreaterThan(2);
    expect(new Set(polls.map((request) => request.url)).size).toBe(polls.length);
    expect(polls.every((request) => request.fate === 'deferred')).toBe(true);
  });


  it('waitFor: a selector ends the wait on a page that never settles; one that never appears ends it at the bound, with what the page has', { timeout: 90_000 }, async () => {
    const found = await renderPage(pool, { document: await documentOf(site.liveUrl), fetch: plainFetch, timeoutMs: 30_000, waitFor: '#links a' });
    // Network idle never comes on this page (it polls): the selector ended the wait.
    expect(found.settled).toBe(true);
    expect(found.title).toBe('App page /app/live');
    expect(new Set(linksOf(found.html))).toEqual(new Set(site.expectedLinks(site.liveUrl)));

    // 8 s: long enough for the page to draw itself beside a loaded suite, which the title shows.
    const missing = await renderPage(pool, { document: await documentOf(site.appUrls[0] ?? ''), fetch: plainFetch, timeoutMs: 8_000, waitFor: '#no-such-element' });
    expect(missing.settled).toBe(false);
    expect(missing.renderMs).toBeGreaterThanOrEqual(8_000);
    expect(missing.title).toBe('App page /app/0');
    expect(missing.missing).toEqual([]);
  });

  it('scroll steps load an infinite-scroll page chunk by chunk, up to the steps allowed, and stop once the page stops growing', { timeout: 90_000 }, async () => {
    const two = await renderPage(pool, { document: await documentOf(site.feedUrl), fetch: plainFetch, timeoutMs: 30_000, scrollSteps: 2 });
    expect(two.steps).toBe(2);
    expect(new Set(linksOf(two.html))).toEqual(new Set(site.feedLinks(3)));
    // More steps allowed than there are chunks: one scroll finds nothing new and ends the steps.
    const all = await renderPage(pool, { document: await documentOf(site.feedUrl), fetch: plainFetch, timeoutMs: 30_000, scrollSteps: 10 });
    expect(all.steps).toBe(FEED_CHUNKS);
    expect(new Set(linksOf(all.html))).toEqual(new Set(site.feedLinks(FEED_CHUNKS)));
    expect(all.requests.filter((request) => request.url.includes('/api/feed/')).map((request) => request.fate)).toEqual(Array.from({ length: FEED_CHUNKS }, () => 'made'));
  });

  it('--screenshot: writes a PNG of the rendered page at the viewport width', { timeout: 60_000 }, async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'crawlq-shot-')), 'page.png');
    const page = await renderPage(pool, { document: await documentOf(site.appUrls[0] ?? ''), fetch: plainFetch, timeoutMs: 15_000, screenshotPath: path });
    expect(page.title).toBe('App page /app/0');
    const png = readFileSync(path);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
    // Playwright's default viewport: 1280 x 720.
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.readUInt32BE(20)).toBe(720);
  });

  it("a request's wait at its gate does not use the page's time (up to gateWaitMs); one never admitted is listed as missing", { timeout: 120_000 }, async () => {
    const url = site.appUrls[3] ?? '';
    // The script is held "at the gate" longer than the page's whole bound, then admitted.
    // The bound leaves the page 10 s of its own: beside a loaded suite (load average
    // 20 on 2 cores) Chromium once took more than 4 s to run the script and draw.
    const held = await renderPage(pool, {
      document: await documentOf(url),
      fetch: async (request, { admitted }) => {
        if (request.url.endsWith('/app.js')) await new Promise((resolve) => setTimeout(resolve, 11_000));
        admitted();
        return plainFetch(request);
      },
      timeoutMs: 10_000,
      gateWaitMs: 60_000,
    });
    expect(held.renderMs).toBeGreaterThanOrEqual(11_000);
    expect(held.title).toBe('App page /app/3');
    expect(new Set(linksOf(held.html))).toEqual(new Set(site.expectedLinks(url).slice(0, 1)));
    expect(held.missing).toEqual([]);

    // Never admitted: the gate's wait moves the bound back only by gateWaitMs; then the page is done without its script.
    const never = await renderPage(pool, {
      document: await documentOf(url),
      fetch: async (request, { signal, admitted }) => {
        if (!request.url.endsWith('/app.js')) {
          admitted();
          return plainFetch(request);
        }
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return { fate: 'deferred', why: 'not admitted in time' };
      },
      timeoutMs: 2_000,
      gateWaitMs: 2_000,
    });
    expect(never.renderMs).toBeGreaterThanOrEqual(4_000);
    expect(never.title).toBe('Loading');
    expect(linksOf(never.html)).toEqual([]);
    expect(never.missing.map((request) => [request.url, request.resourceType, request.fate])).toEqual([[`${site.scriptOrigin}/app.js`, 'script', 'deferred']]);
  });
});
