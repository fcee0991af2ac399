import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserCrashedError, BrowserPool, findChromium, renderPage, type BrowserRequest, type FetchedDocument, type SubrequestAnswer } from '../src/index.js';
import { childPids } from '../src/process-tree.js';

const chromium = findChromium();
if (chromium === undefined) console.warn('renderer tests skipped: no system Chromium (apt-get install -y chromium)');

let site: SpaSite;
let pool: BrowserPool;

/** A plain fetch standing in for the crawler's gated one. */
async function plainFetch(request: BrowserRequest): Promise<SubrequestAnswer> {
  const response = await fetch(request.url);
  return { fate: 'made', status: response.status, headers: Object.fromEntries(response.headers), body: Buffer.from(await response.arrayBuffer()) };
}

async function documentOf(url: string): Promise<FetchedDocument> {
  const response = await fetch(url);
  return { url, status: response.status, headers: Object.fromEntries(response.headers), body: Buffer.from(await response.arrayBuffer()) };
}

function linksOf(html: string): string[] {
  return [...html.matchAll(/href="([^"]+)"/g)].map((match) => match[1] ?? '');
}

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

  it('a page that never settles ends at its bound, with what it has; its polls are asked for once, the rest blocked', { timeout: 60_000 }, async () => {
    const page = await renderPage(pool, {
      document: await documentOf(site.liveUrl),
      // The poll's answer never comes before the page is done (a gate that does not admit it in time).
      fetch: async (request, { signal }) => {
        if (!request.url.endsWith('/api/ping')) return plainFetch(request);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return { fate: 'deferred', why: 'not admitted in time' };
      },
      timeoutMs: 8_000,
    });
    expect(page.settled).toBe(false);
    expect(page.title).toBe('App page /app/live');
    expect(page.renderMs).toBeGreaterThanOrEqual(8_000);
    const polls = page.requests.filter((request) => request.url.endsWith('/api/ping'));
    expect(polls.filter((request) => request.fate === 'deferred')).toHaveLength(1);
    expect(polls.filter((request) => request.fate === 'blocked').every((request) => request.why === 'asked for again (polling)')).toBe(true);
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
