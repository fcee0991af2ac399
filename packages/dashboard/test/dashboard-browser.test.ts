import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { openFleetAdmin, type FleetAdmin } from '@crawlq/crawler';
import { startDashboard, type Dashboard } from '../src/index.js';
import { openNamespace, seedDeadLetter, type Namespace } from './helpers.js';

/** Debian's chromium (`apt-get install -y chromium`); playwright-core never downloads a browser here. */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`dashboard browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const SCREENSHOT = '/tmp/crawlq-dashboard.png';
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

  it('renders bull-board at /queues from local assets only', async () => {
    const { page, requested, problems } = await newPage();
    await page.goto(`${dashboard.url}/queues`);
    // The sidebar lists the three queues once the React app has loaded its data.
    for (const name of ['crawl', 'dead-letter', 'alerts']) {
      await page.getByRole('link', { name, exact: true }).first().waitFor({ timeout: 20_000 });
    }
    await page.getByRole('link', { name: 'dead-letter', exact: true }).first().click();
    await waitFor('the dead letter job in bull-board', async () => (await page.getByText('fp-beta').count()) > 0, { timeoutMs: 20_000 });
    // Its "[Paused]" badge comes with the reason, beside it in the queue's header.
    await page.getByText('[ Paused ]').first().waitFor({ timeout: 20_000 });
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

  it('lands on the overview, which refreshes itself, and pauses and resumes a group for the whole fleet', async () => {
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
    await waitFor('the refreshed group list', async () => (await page.locator('tr[data-group="late.example"]').getByTestId('in-flight').count()) === 1, { timeoutMs: 30_000 });
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
});
