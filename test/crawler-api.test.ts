import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import { startTestRedis, type TestRedis, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCatalogueSite } from './support/catalogue-site.js';
import { cliEnv, runCli } from './support/cli.js';
import { duplicates } from './support/records.js';
import { startStaticSite } from './support/static-site.js';
import { sitesArrivalClock } from './support/politeness.js';

const clock = sitesArrivalClock();

// A user's crawler (two routes, typed items) run by `crawlq crawl --crawler`
// on a fleet of three worker processes against a loopback catalogue.

const CRAWLER = fileURLToPath(new URL('./fixtures/catalogue-crawler.ts', import.meta.url));
const PRIORITY_CRAWLER = fileURLToPath(new URL('./fixtures/priority-crawler.ts', import.meta.url));
let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

function readItems(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('crawlq crawl --crawler', () => {
  it('three workers run two routes: every item once, politeness held at the server, a thrown error dead-lettered with its message', { timeout: 400_000 }, async () => {
    const site = await startCatalogueSite({ host: '127.0.0.61', pages: 6, productsPerPage: 5, brokenIds: [13] });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-crawler-'));
      const out = join(dir, 'items.jsonl');
      const namespace = 'crawler-api';
      const rate = 8;
      const result = await runCli(
        ['crawl', `${site.origin}/list/1`, '--crawler', CRAWLER, '--workers', '3', '--out', out, '--namespace', namespace, '--state-dir', dir,
          '--allow-private-network', '--max-depth', '20', '--rate', `${rate}/1s`, '--domain-concurrency', '3', '--attempts', '2', '--backoff', '100ms'],
        { env: cliEnv(redis.url), timeoutMs: 360_000 },
      );
      expect(result.code, result.stderr).toBe(0);
      const items = readItems(out);
      const urls = items.map((item) => String(item.url));
      expect(duplicates(urls)).toEqual([]);
      const expected = site.productIds.filter((id) => !site.brokenIds.includes(id)).map((id) => `${site.origin}/product/${id}`);
      expect(new Set(urls)).toEqual(new Set(expected));
      // The item's own fields, userData carried from the list that enqueued the product.
      for (const item of items) {
        const id = Number(/\/product\/(\d+)$/.exec(String(item.url))?.[1]);
        expect(item).toEqual({ url: `${site.origin}/product/${id}`, name: `Product ${id}`, price: id + 0.5, list: Math.ceil(id / 5) });
      }
      // Politeness at the server: never more starts in a window than the rate allows.
      const starts = site.requests.filter((request) => request.path !== '/robots.txt').map((request) => request.startedAt);
      expect(maxStampedInWindow(clock, starts, 1_000)).toBeLessThanOrEqual(rate);
      // The redirect into a disallowed path was not followed, and robots.txt was asked once per worker at most.
      expect(site.requests.some((request) => request.path.startsWith('/private/'))).toBe(false);
      // Each page fetched once; the broken product once per attempt, plus once more when it failed as a later URL
      // of a job of several (it goes back to the backlog and is tried again as a job's first URL).
      const served = site.requests.map((request) => request.path).filter((path) => path !== '/robots.txt' && path !== '/product/13');
      expect(duplicates(served)).toEqual([]);
      const brokenFetches = site.requests.filter((request) => request.path === '/product/13').length;
      expect(brokenFetches).toBeGreaterThanOrEqual(2);
      expect(brokenFetches).toBeLessThanOrEqual(3);

      const admin = createDeadLetterAdmin({ connection: { url: redis.url }, namespace });
      const entries = await admin.list().finally(() => admin.close());
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ url: `${site.origin}/product/13`, reason: 'handler', message: `handler: no price on ${site.origin}/product/13`, attempts: 2 });
      expect(entries[0]?.stack).toContain('catalogue-crawler.ts');
    } finally {
      await site.close();
    }
  });

  it("enqueue's priority: a group's urgent URLs are fetched before the plain ones enqueued earlier, as the server sees them", { timeout: 240_000 }, async () => {
    const plain = Array.from({ length: 20 }, (_, i) => `/plain/${i + 1}`);
    const urgent = Array.from({ length: 5 }, (_, i) => `/urgent/${i + 1}`);
    const page = (body: string) => ({ type: 'text/html; charset=utf-8', body: `<!doctype html><html><body>${body}</body></html>` });
    const pages = await startStaticSite('127.0.0.64', () => Object.fromEntries([...plain, ...urgent].map((path) => [path, page(path)])));
    const start = await startStaticSite('127.0.0.63', () => ({
      '/': page([...plain.map((path) => `<a class="plain" href="${pages.origin}${path}">p</a>`), ...urgent.map((path) => `<a class="urgent" href="${pages.origin}${path}">u</a>`)].join('')),
    }));
    try {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-priority-'));
      const out = join(dir, 'items.jsonl');
      // One worker taking one job at a time: the second host's jobs are fetched in the order they were released.
      // Its first job (slow start) may be released while the start page's handler runs, between its two
      // enqueue calls; none other before that job is done, which is after the handler returned.
      const result = await runCli(
        ['crawl', `${start.origin}/`, '--crawler', PRIORITY_CRAWLER, '--workers', '1', '--concurrency', '1', '--out', out, '--namespace', 'crawler-priority', '--state-dir', dir,
          '--allow-private-network', '--scope', 'any', '--rate', 'none', '--domain-concurrency', '1'],
        { env: cliEnv(redis.url), timeoutMs: 200_000 },
      );
      expect(result.code, result.stderr).toBe(0);
      const fetched = pages.requests.filter((path) => path !== '/robots.txt');
      expect(duplicates(fetched)).toEqual([]);
      expect(new Set(fetched)).toEqual(new Set([...plain, ...urgent]));
      const lastUrgent = Math.max(...urgent.map((path) => fetched.indexOf(path)));
      const plainBefore = fetched.slice(0, lastUrgent).filter((path) => path.startsWith('/plain/'));
      // First in, first out would fetch all 20 plain pages first.
      expect(plainBefore.length, fetched.join(' ')).toBeLessThanOrEqual(1);
      expect(new Set(readItems(out).map((item) => String(item.url)))).toEqual(new Set([...plain, ...urgent].map((path) => `${pages.origin}${path}`)));
    } finally {
      await start.close();
      await pages.close();
    }
  });

  it('a worker running another crawler than the crawl exits 2 with one line', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-crawler-'));
    const namespace = 'crawler-mismatch';
    const first = await runCli(['enqueue', 'http://127.0.0.62:9/', '--namespace', namespace, '--allow-private-network'], { env: cliEnv(redis.url) });
    expect(first.code, first.stderr).toBe(0);
    // The same crawler under another name: another identity.
    const other = join(dir, 'other-crawler.ts');
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
    writeFileSync(other, readFileSync(CRAWLER, 'utf8').replace("name: 'catalogue'", "name: 'other'").replace("from '@crawlq/crawler/api'", `from '${fileURLToPath(new URL('../packages/crawler/src/api.ts', import.meta.url))}'`));
    const env = cliEnv(redis.url);
    const args = (crawler: string[]) => ['worker', ...crawler, '--namespace', namespace, '--state-dir', dir, '--out', join(dir, 'out.jsonl'), '--allow-private-network'];
    const worker = await startAndStopWorker(args(['--crawler', CRAWLER]), env);
    expect(worker.stderr).toContain('running crawler catalogue@');
    const mismatch = await runCli(args(['--crawler', other]), { env });
    expect(mismatch.code).toBe(2);
    const lines = mismatch.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^crawlq: --crawler: the crawl in namespace "crawler-mismatch" runs crawler catalogue@[0-9a-f]{16}, this process runs other@[0-9a-f]{16}: every worker/);
    const builtIn = await runCli(args([]), { env });
    expect(builtIn.code).toBe(2);
    expect(builtIn.stderr).toContain('this process runs page-record (built-in)');
  });
});

/** Starts a worker, waits for it to say which crawler it runs, stops it. */
async function startAndStopWorker(args: string[], env: Record<string, string | undefined>): Promise<{ stderr: string }> {
  const { startCli } = await import('./support/cli.js');
  const child = startCli(args, { env });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${stderr}`)), 90_000);
    child.stderr?.on('data', () => {
      if (stderr.includes('running crawler')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', () => reject(new Error(`worker exited: ${stderr}`)));
  });
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return { stderr };
}
