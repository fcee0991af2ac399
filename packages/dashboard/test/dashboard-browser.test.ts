import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { openFleetAdmin, pauseGroup, type FleetAdmin } from '@crawlq/crawl-control';
import { stateKeyPrefix } from '@crawlq/redis';
import { startDashboard, type Dashboard } from '../src/index.js';
import { openNamespace, seedDeadLetter, type Namespace } from './helpers.js';

/** Debian's chromium (`apt-get install -y chromium`); playwright-core never downloads a browser here. */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`dashboard browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const SCREENSHOT = '/tmp/crawlq-dashboard.png';
/** The little of a canvas these tests read. */
interface BrowserCanvas {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, width: number, height: number): { data: ArrayLike<number> } } | null;
}
/** The little of a chart's box these tests read. */
interface BrowserChartBox {
  querySelectorAll(selector: 'canvas'): Iterable<{ getBoundingClientRect(): { width: number; height: number } }>;
}
/** The little of the browser's window these tests read (the test tsconfig has no DOM lib). */
interface BrowserWindow {
  getComputedStyle(element: unknown): { lineHeight: string };
  document: { documentElement: { scrollWidth: number } };
}
const LONG_ID = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b';
const LONG_URL = 'http://127.0.0.1:18503/catalogue/category/books/travel_2/index.html?page=3&sort=price-descending&view=grid';

describe.skipIf(!hasChromium)('the dashboard in headless chromium', () => {
  let redis: TestRedis;
  let space: Namespace;
  let dashboard: Dashboard;
  let browser: Browser;
  let admin: FleetAdmin;

  beforeAll(async () => {
    redis = await startTestRedis();
    space = openNamespace(redis.url, `t${randomUUID().slice(0, 8)}`);
    await seedDeadLetter(space, { id: 'fp-alpha', url: 'https://shop.example.com/cart/alpha', group: 'shop.example.com' });
    await seedDeadLetter(space, { id: 'fp-beta', url: 'https://shop.example.com/cart/beta', group: 'shop.example.com' });
    await seedDeadLetter(space, {
      id: 'fp-gamma',
      url: 'https://slow.example.net/gamma',
      group: 'slow.example.net',
      error: Object.assign(new Error('Timeout awaiting response for 10000ms'), { code: 'ETIMEDOUT' }),
    });
    // A real entry's id is a 40-character fingerprint; with a long URL it is what squeezed the URL column.
    await seedDeadLetter(space, { id: LONG_ID, url: LONG_URL, group: '127.0.0.1:18503' });
    admin = await openFleetAdmin(redis.url, space.namespace);
    dashboard = await startDashboard({ redisUrl: redis.url, namespace: space.namespace, port: 0, jobPolicy: { attempts: 3, backoffMs: 1000 } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await admin?.close();
    await space?.close();
    await redis?.stop();
  });

  async function newPage(width = 1280): Promise<{ page: Page; requested: string[]; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    // Each step waits up to 45 s for what the page shows: beside a loaded suite (load
    // average 20 on 2 cores) Chromium shares the cores with everything else, and
    // Playwright's 30 s default once ran a test past its minute.
    context.setDefaultTimeout(45_000);
    const page = await context.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (req) => requested.push(req.url()));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // CSP violations and failed loads show up as console errors.
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    return { page, requested, problems };
  }

  const row = (page: Page, url: string) => page.locator('table.entries tbody tr', { hasText: url });

  it('retries a dead letter from its row: it leaves the list, a message says so, and the job is queued', async () => {
    const { page, requested, problems } = await newPage();
    await page.goto(`${dashboard.url}/dead-letters`);
    expect(await page.getByTestId('total').textContent()).toBe('4');
    expect(await row(page, 'https://shop.example.com/cart/alpha').count()).toBe(1);

    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await Promise.all([
      page.waitForURL(`${dashboard.url}/dead-letters`, { waitUntil: 'load' }),
      row(page, 'https://shop.example.com/cart/alpha').getByRole('button', { name: 'Retry' }).click(),
    ]);
    expect(await page.getByRole('status').textContent()).toContain('Retried https://shop.example.com/cart/alpha');
    expect(await row(page, 'https://shop.example.com/cart/alpha').count()).toBe(0);
    expect(await row(page, 'https://shop.example.com/cart/beta').count()).toBe(1);
    expect(await page.getByTestId('total').textContent()).toBe('3');
    const job = await space.crawl.getJob('fp-alpha');
    expect(job?.data.url).toBe('https://shop.example.com/cart/alpha');
    expect(await job?.getState()).toBe('waiting');
    expect(await space.dlq.show('fp-alpha')).toBeNull();

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(dialogs).toEqual([]); // Retrying one entry asks nothing.
    expect(problems).toEqual([]);
    expect(requested.every((url) => url.startsWith(`${dashboard.url}/`))).toBe(true);
  });

  it('asks before purging: dismissed keeps the entry, accepted deletes it', async () => {
    const { page, problems } = await newPage();
    await page.goto(`${dashboard.url}/dead-letters?group=slow.example.net`);
    const purge = row(page, 'https://slow.example.net/gamma').getByRole('button', { name: 'Purge' });

    page.once('dialog', (dialog) => void dialog.dismiss());
    await purge.click();
    // Nothing was sent: the entry is still there, on the same page.
    expect(await space.dlq.show('fp-gamma')).not.toBeNull();
    expect(await row(page, 'https://slow.example.net/gamma').count()).toBe(1);

    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await Promise.all([page.waitForURL(`${dashboard.url}/dead-letters?group=slow.example.net`, { waitUntil: 'load' }), purge.click()]);
    expect(asked).toEqual(['Delete the dead letter for https://slow.example.net/gamma?']);
    expect(await page.getByRole('status').textContent()).toContain('Purged the dead letter for https://slow.example.net/gamma');
    expect(await space.dlq.show('fp-gamma')).toBeNull();
    expect(problems).toEqual([]);
  });

  // The whole test took 7.6 s beside a loaded suite; bull-board's React app is the heaviest page here.
  it('renders bull-board at /queues from local assets only', { timeout: 180_000 }, async () => {
    const { page, requested, problems } = await newPage();
    await page.goto(`${dashboard.url}/queues`);
    // The sidebar lists the three queues once the React app has loaded its data.
    for (const name of ['crawl', 'dead-letter', 'alerts']) {
      await page.getByRole('link', { name, exact: true }).first().waitFor();
    }
    await page.getByRole('link', { name: 'dead-letter', exact: true }).first().click();
    await waitFor(async () => (await page.getByText('fp-beta').count()) > 0, { what: 'the dead letter job in bull-board', timeoutMs: 45_000, intervalMs: 25 });
    // Its "[Paused]" badge comes with the reason, beside it in the queue's header.
    await page.getByText('[ Paused ]').first().waitFor();
    expect(await page.getByText('Paused on purpose: no worker consumes dead letters', { exact: false }).count()).toBeGreaterThan(0);
    expect(requested.some((url) => /\/queues\/static\/js\/main\.[\w]+\.js$/.test(url))).toBe(true);
    expect(requested.some((url) => url.includes('/queues/api/queues'))).toBe(true);
    // Nothing from elsewhere (bull-board's Google Fonts link is blocked by our CSP before any request).
    expect(requested.filter((url) => !url.startsWith(`${dashboard.url}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
  });

  for (const width of [800, 480]) {
    it(`keeps the dead-letter list readable ${width} px wide: the URL gets a line of its own, not a letter per line`, async () => {
      const { page, problems } = await newPage(width);
      await page.goto(`${dashboard.url}/dead-letters?group=127.0.0.1`);
      const url = row(page, LONG_URL).locator('td.url');
      const box = await url.boundingBox();
      const lineHeight = await url.evaluate((cell) => parseFloat((globalThis as unknown as BrowserWindow).getComputedStyle(cell).lineHeight));
      if (box === null) throw new Error('the URL cell is not rendered');
      // The old table gave it a sliver: about one character per line, dozens of lines.
      expect(box.width).toBeGreaterThanOrEqual(Math.min(300, width / 2));
      expect(box.height / lineHeight).toBeLessThanOrEqual(4);
      // Nothing sticks out of the page sideways: the buttons can be reached.
      expect(await page.evaluate(() => (globalThis as unknown as BrowserWindow).document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(await row(page, LONG_URL).getByRole('button', { name: 'Retry' }).isVisible()).toBe(true);
      await page.screenshot({ path: `/tmp/crawlq-dashboard-${width}.png`, fullPage: true });
      expect(problems).toEqual([]);
    });
  }

  it('lands on the overview, which refreshes itself, and pauses and resumes a group for the whole fleet', { timeout: 180_000 }, async () => {
    const group = '127.0.0.1:18503';
    await admin.limiter.acquire({ group, leaseId: 'browser-lease-1' });
    const { page, problems } = await newPage();
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });
    await page.goto(`${dashboard.url}/`);
    expect(new URL(page.url()).pathname).toBe('/overview');
    const groupRow = page.locator(`tr[data-group="${group}"]`);
    expect(await groupRow.getByTestId('in-flight').textContent()).toBe('1');
    expect(await page.getByTestId('dead-lettered').textContent()).toMatch(/^\d+$/);

    // A worker starts on a new group: the page shows it without a reload.
    const loaded = navigations;
    await admin.limiter.acquire({ group: 'late.example', leaseId: 'browser-lease-2' });
    await waitFor(async () => (await page.locator('tr[data-group="late.example"]').getByTestId('in-flight').count()) === 1, { what: 'the refreshed group list', timeoutMs: 45_000, intervalMs: 25 });
    expect(await page.locator('tr[data-group="late.example"]').getByTestId('in-flight').textContent()).toBe('1');
    expect(navigations).toBe(loaded);

    await Promise.all([page.waitForURL(`${dashboard.url}/overview`, { waitUntil: 'load' }), groupRow.getByRole('button', { name: 'Pause' }).click()]);
    expect(await page.getByRole('status').textContent()).toContain(`Paused ${group} for 10 min on every worker.`);
    const paused = await admin.limiter.status(group);
    expect(paused.pausedUntil).not.toBeNull();
    expect(paused.pauseReason).toBe('admin');
    expect(await groupRow.getByTestId('paused').textContent()).toContain('paused');

    await Promise.all([page.waitForURL(`${dashboard.url}/overview`, { waitUntil: 'load' }), groupRow.getByRole('button', { name: 'Resume' }).click()]);
    expect(await page.getByRole('status').textContent()).toContain(`Resumed ${group}`);
    expect((await admin.limiter.status(group)).pausedUntil).toBeNull();
    expect(await groupRow.getByRole('button', { name: 'Pause' }).count()).toBe(1);
    await page.screenshot({ path: '/tmp/crawlq-dashboard-overview.png', fullPage: true });
    expect(problems).toEqual([]);
  });

  it('draws pages/s, the status mix and each group\'s pace and waits over time, with uPlot served by the dashboard', { timeout: 180_000 }, async () => {
    // The fleet's counters, as workers write them, moved between readings a second or more apart.
    const statsKey = `${stateKeyPrefix(space.namespace)}:stats`;
    await pauseGroup(admin, 'held.example', 600_000);
    for (let round = 0; round < 4; round += 1) {
      await admin.redis.hincrby(statsKey, 'pages', 10);
      await admin.redis.hincrby(statsKey, 'status:2xx', 8);
      await admin.redis.hincrby(statsKey, 'status:4xx', 2);
      // A second apart: admitted at the group's default pace, and given back as a finished fetch would.
      const admission = await admin.limiter.acquire({ group: 'busy.example', leaseId: `chart-${round}` });
      if (admission.admitted) await admin.limiter.release(admission.lease, { sent: true });
      // Paused: every ask is held back, a wait.
      await admin.limiter.acquire({ group: 'held.example', leaseId: `held-${round}` });
      await fetch(`${dashboard.url}/api/overview`);
      await sleep(1_100);
    }
    await fetch(`${dashboard.url}/api/overview`);
    const history = (await (await fetch(`${dashboard.url}/api/history`)).json()) as { at: number[]; pagesPerSecond: number[]; statuses: Record<string, number[]>; groups: { group: string; admitted: (number | null)[]; deferred: (number | null)[] }[] };
    expect(history.at.length).toBeGreaterThanOrEqual(4);
    // Rates over intervals of a second or more, judged by the pages they add up to, not by speed:
    // a reading stamped late can be dropped as too close to the one before, and the next interval
    // then holds two rounds of 10 pages. Every interval whose start is in the series holds whole
    // rounds, at least one in all.
    expect(Math.max(...history.pagesPerSecond)).toBeGreaterThan(0);
    const pagesPerInterval = history.pagesPerSecond.slice(1).map((rate, index) => (rate * (history.at[index + 1]! - history.at[index]!)) / 1000);
    for (const pages of pagesPerInterval) expect(Math.abs(pages - Math.round(pages / 10) * 10), pagesPerInterval.join(', ')).toBeLessThan(0.2);
    expect(pagesPerInterval.reduce((sum, pages) => sum + pages, 0)).toBeGreaterThanOrEqual(9.8);
    expect(Object.keys(history.statuses).sort()).toEqual(['2xx', '4xx']);
    const busy = history.groups.find((group) => group.group === 'busy.example');
    const held = history.groups.find((group) => group.group === 'held.example');
    expect(Math.max(...(busy?.admitted ?? []).map(Number))).toBeGreaterThan(0);
    expect(Math.max(...(held?.deferred ?? []).map(Number))).toBeGreaterThan(0);
    expect(held?.admitted.every((value) => value === null || value === 0)).toBe(true);

    const { page, requested, problems } = await newPage();
    await page.goto(`${dashboard.url}/overview`);
    const colours = { pages: [0x24, 0x57, 0xc5], statuses: [0x2b, 0x8a, 0x3e] } as const;
    for (const name of ['pages', 'statuses', 'pace', 'waits']) {
      const chart = page.getByTestId(`chart-${name}`);
      await waitFor(async () => Number(await chart.getAttribute('data-points')) >= 2, { what: `the ${name} chart`, timeoutMs: 20_000, intervalMs: 25 });
      // Read in one step inside the page: each refresh draws the chart anew on a new
      // canvas, so a canvas found by one call can be gone by the next.
      const canvases = await chart.evaluate((box) =>
        Array.from((box as unknown as BrowserChartBox).querySelectorAll('canvas'), (canvas) => {
          const rect = canvas.getBoundingClientRect();
          return { width: rect.width, height: rect.height };
        }),
      );
      expect(canvases).toHaveLength(1);
      expect(canvases[0]?.width).toBeGreaterThan(200);
      expect(canvases[0]?.height).toBeGreaterThan(100);
    }
    // The lines are on the canvas, in their series' colours (the first series of each chart).
    for (const [name, rgb] of Object.entries(colours)) {
      const drawn = await page.getByTestId(`chart-${name}`).locator('canvas').evaluate((element, colour) => {
        const canvas = element as unknown as BrowserCanvas;
        const pixels = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
        let count = 0;
        for (let index = 0; index < pixels.length; index += 4) {
          if (Math.abs((pixels[index] ?? 0) - colour[0]) < 24 && Math.abs((pixels[index + 1] ?? 0) - colour[1]) < 24 && Math.abs((pixels[index + 2] ?? 0) - colour[2]) < 24 && (pixels[index + 3] ?? 0) > 200) count += 1;
        }
        return count;
      }, rgb);
      expect(drawn, `${name} chart pixels in its series colour`).toBeGreaterThan(20);
    }
    // Each group is a series of its own, named in the legend.
    expect(await page.getByTestId('chart-pace').locator('.u-legend').textContent()).toContain('busy.example');
    expect(await page.getByTestId('chart-waits').locator('.u-legend').textContent()).toContain('held.example');
    expect(await page.getByTestId('chart-statuses').locator('.u-legend').textContent()).toMatch(/2xx.*4xx/);

    const dir = mkdtempSync(join(tmpdir(), 'crawlq-dashboard-charts-'));
    try {
      const file = join(dir, 'overview-charts.png');
      await page.screenshot({ path: file, fullPage: true });
      const png = readFileSync(file);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
      expect(png.readUInt32BE(16)).toBe(1280);
      expect(png.readUInt32BE(20)).toBeGreaterThan(400);
      if (process.env.CRAWLQ_KEEP_SCREENSHOTS !== undefined) await page.screenshot({ path: '/tmp/crawlq-dashboard-charts.png', fullPage: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // uPlot came from the dashboard itself, and nothing broke (no CSP refusal, no script error).
    expect(requested).toContain(`${dashboard.url}/assets/uplot.min.js`);
    expect(requested.every((url) => url.startsWith(`${dashboard.url}/`))).toBe(true);
    expect(problems).toEqual([]);
  });
});
