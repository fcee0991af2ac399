// Crawlee's PlaywrightCrawler as the render bench's contender, in a process of
// its own (so its memory is its own): the system Chromium through
// playwright-core (no browser download), a fixed concurrency, and per page
// what crawlq's --render does on the same fixture: wait for network idle
// (bounded by the same render timeout), click "load more" once where there is
// one and wait again, then follow every link of the rendered DOM.
// Usage: render-contender.ts <concurrency> <timeoutMs> <seed...>; prints one
// JSON line { pages, seconds }. Crawlee keeps its storage where
// CRAWLEE_STORAGE_DIR points (the bench sets a temp dir).
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM_FLAGS, findChromium } from '@crawlq/renderer';

const [concurrencyArg, timeoutArg, ...seeds] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const timeoutMs = Number(timeoutArg);
if (!Number.isInteger(concurrency) || !Number.isInteger(timeoutMs) || seeds.length === 0) throw new Error('usage: render-contender.ts <concurrency> <timeoutMs> <seed...>');
const executablePath = findChromium();
if (executablePath === undefined) throw new Error('no system Chromium (apt-get install -y chromium)');

const { PlaywrightCrawler, log } = await import('crawlee');
log.setLevel(log.LEVELS.WARNING);
let pages = 0;
const crawler = new PlaywrightCrawler({
  // Fixed at the bench's concurrency (see scale-contender.ts: all three are needed).
  minConcurrency: concurrency,
  maxConcurrency: concurrency,
  autoscaledPoolOptions: { desiredConcurrency: concurrency },
  maxRequestRetries: 0,
  requestHandlerTimeoutSecs: Math.ceil((3 * timeoutMs) / 1000),
  headless: true,
  // The same Chromium and flags as crawlq's; no fingerprint injection (crawlq does none).
  launchContext: { launcher: chromium, launchOptions: { executablePath, args: [...CHROMIUM_FLAGS.args], ignoreDefaultArgs: [...CHROMIUM_FLAGS.ignoreDefaultArgs], chromiumSandbox: false } },
  browserPoolOptions: { useFingerprints: false },
  async requestHandler({ page: crawleePage, request, enqueueLinks, pushData }) {
    // Crawlee types its page from the full `playwright` package, which is not installed: it is playwright-core's page.
    const page = crawleePage as unknown as Page;
    await page.waitForLoadState('networkidle', { timeout: timeoutMs }).catch(() => undefined);
    const more = page.locator('#more').first();
    if (await more.isVisible().catch(() => false)) {
      await more.click({ timeout: timeoutMs }).catch(() => undefined);
      await page.waitForLoadState('networkidle', { timeout: timeoutMs }).catch(() => undefined);
    }
    pages += 1;
    await pushData({ url: request.loadedUrl ?? request.url, title: await page.title() });
    await enqueueLinks({ strategy: 'all' });
  },
});
const started = performance.now();
await crawler.run(seeds);
process.stdout.write(`${JSON.stringify({ pages, seconds: (performance.now() - started) / 1000 })}\n`);
