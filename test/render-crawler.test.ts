import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { findChromium } from '@crawlq/renderer';
import { startTestRedis, type TestRedis, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { byHost, sitesArrivalClock } from './support/politeness.js';
import { duplicates } from './support/records.js';
import type { AppItem } from './fixtures/spa-crawler.js';

const clock = sitesArrivalClock();

// A user's crawler (TypeScript, --crawler) on the loopback single-page app with
// --render: its route's `$` is the DOM the browser left, so its items hold what
// only the app's script writes, and it follows links only that DOM has.

const chromium = findChromium();
if (chromium === undefined) console.warn('render crawler e2e skipped: no system Chromium (apt-get install -y chromium)');

const CRAWLER = fileURLToPath(new URL('./fixtures/spa-crawler.ts', import.meta.url));
const RATE = 5;

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function crawl(site: SpaSite, mode: 'always' | 'auto', appHost: string): Promise<AppItem[]> {
  const dir = mkdtempSync(join(tmpdir(), `crawlq-render-crawler-${mode}-`));
  const out = join(dir, 'items.jsonl');
  const config = join(dir, 'crawlq.json');
  // "Load more" is clicked on the app's pages: the links it adds exist in no response the server sends.
  writeFileSync(config, JSON.stringify({ limitRules: [{ match: appHost, clickSelector: '#more', clickSteps: 1 }] }));
  const result = await runCli(
    ['crawl', ...site.seeds, '--crawler', CRAWLER, '--render', mode, '--workers', '2', '--concurrency', '2', '--browser-pages', '2', '--render-timeout', '20s',
      '--rate', `${RATE}/1s`, '--domain-concurrency', '2', '--allow-private-network', '--max-depth', '20', '--attempts', '3', '--backoff', '200ms',
      '--namespace', `render-crawler-${mode}`, '--state-dir', dir, '--config', config, '--out', out],
    { env: cliEnv(redis.url), timeoutMs: 360_000 },
  );
  expect(result.code, result.stderr).toBe(0);
  const items = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as AppItem);
  // Each page once, every page of both groups: the static pages are linked only from what "load more" adds.
  expect(duplicates(items.map((item) => item.url))).toEqual([]);
  expect(new Set(items.map((item) => item.url))).toEqual(new Set([...site.appUrls, ...site.staticUrls]));
  // Every app item holds what the app's script wrote after its XHR, and the links the click added.
  for (const item of items.filter((candidate) => site.appUrls.includes(candidate.url))) {
    const path = new URL(item.url).pathname;
    expect(item, item.url).toMatchObject({ rendered: true, complete: true, title: `App page ${path}`, heading: `App page ${path}`, domHasHeading: true });
    expect(item.links, item.url).toEqual(expect.arrayContaining([...site.expectedLinks(item.url)]));
    if (path !== '/app/live') expect(item.steps, item.url).toBe(1);
  }
  // At the servers: no host ever saw more than RATE request starts in a second,
  // documents, scripts, XHR, polls and robots.txt together.
  for (const [host, requests] of byHost(site.requests)) {
    expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1_000), host).toBeLessThanOrEqual(RATE);
  }
  return items;
}

describe.skipIf(chromium === undefined)('a crawler\'s routes on rendered pages', () => {
  it('--render always: every route gets the rendered DOM (rendered: always), app items hold the script\'s content, static ones their own', { timeout: 420_000 }, async () => {
    const site = await startSpaSite({ appHost: '127.0.0.161', scriptHost: '127.0.0.162', staticHost: '127.0.0.163', appPages: 3, staticPages: 3 });
    try {
      const items = await crawl(site, 'always', '127.0.0.161');
      for (const item of items) expect(item, item.url).toMatchObject({ rendered: true, reason: 'always' });
      for (const item of items.filter((candidate) => site.staticUrls.includes(candidate.url))) {
        expect(item.title, item.url).toMatch(/^Static page \d$/);
      }
      // The browser's requests went through the crawler's gates: the script once per app page at most, from its own host.
      const scripts = site.requests.filter((request) => request.path === '/app.js');
      expect(scripts.length).toBeGreaterThan(0);
      expect(scripts.length).toBeLessThanOrEqual(site.appUrls.length * 3);
    } finally {
      await site.close();
    }
  });

  it('--render auto: the app group\'s pages reach the route rendered, the static group\'s mostly as fetched (rendered undefined)', { timeout: 420_000 }, async () => {
    const site = await startSpaSite({ appHost: '127.0.0.164', scriptHost: '127.0.0.165', staticHost: '127.0.0.166', appPages: 3, staticPages: 8 });
    try {
      const items = await crawl(site, 'auto', '127.0.0.164');
      for (const item of items.filter((candidate) => site.appUrls.includes(candidate.url))) {
        expect(['auto', 'sample'], item.url).toContain(item.reason);
      }
      const statics = items.filter((candidate) => site.staticUrls.includes(candidate.url));
      // A few samples judge the static group; the rest are plain fetches, and the route is told so.
      const plain = statics.filter((item) => !item.rendered);
      expect(plain.length).toBeGreaterThan(0);
      for (const item of plain) expect(item, item.url).toMatchObject({ reason: null, complete: null, steps: 0 });
      for (const item of statics) expect(item.title, item.url).toMatch(/^Static page \d$/);
    } finally {
      await site.close();
    }
  });
});
