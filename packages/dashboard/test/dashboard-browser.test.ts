import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { startDashboard, type Dashboard } from '../src/index.js';
import { openNamespace, seedDeadLetter, waitFor, type Namespace } from './helpers.js';

/** Debian's chromium (`apt-get install -y chromium`); playwright-core never downloads a browser here. */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`dashboard browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const SCREENSHOT = '/tmp/crawlq-dashboard.png';

describe.skipIf(!hasChromium)('the dashboard in headless chromium', () => {
  let redis: TestRedis;
  let space: Namespace;
  let dashboard: Dashboard;
  let browser: Browser;

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
    dashboard = await startDashboard({ redisUrl: redis.url, namespace: space.namespace, port: 0, jobPolicy: { attempts: 3, backoffMs: 1000 } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await space?.close();
    await redis?.stop();
  });

  async function newPage(): Promise<{ page: Page; requested: string[]; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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
    await page.goto(`${dashboard.url}/`);
    expect(new URL(page.url()).pathname).toBe('/dead-letters');
    expect(await page.getByTestId('total').textContent()).toBe('3');
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
    expect(await page.getByTestId('total').textContent()).toBe('2');
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
    await waitFor('the dead letter job in bull-board', async () => (await page.getByText('fp-beta').count()) > 0, 20_000);
    expect(requested.some((url) => /\/queues\/static\/js\/main\.[\w]+\.js$/.test(url))).toBe(true);
    expect(requested.some((url) => url.includes('/queues/api/queues'))).toBe(true);
    // Nothing from elsewhere (bull-board's Google Fonts link is blocked by our CSP before any request).
    expect(requested.filter((url) => !url.startsWith(`${dashboard.url}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
