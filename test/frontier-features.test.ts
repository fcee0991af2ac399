import { readBacklogEntries } from '@crawlq/frontier';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { freePort, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { duplicates, readRecords } from './support/records.js';

let redis: TestRedis;
let fleet: Fleet | undefined;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => redis.stop());

async function site(spec: Parameters<typeof startDemoSite>[0]): Promise<DemoSite> {
  const started = await startDemoSite(spec);
  closers.push(() => started.close());
  return started;
}

describe('robots.txt in a fleet crawl', () => {
  it('skips disallowed URLs without fetching them, and fetches robots.txt once for three workers', { timeout: 150_000 }, async () => {
    const host = '127.0.0.70';
    const web = await site({ hosts: [host], pagesPerHost: 30, linksPerPage: 3, robotsTxt: { [host]: 'User-agent: *\nDisallow: /p/1\n\nUser-agent: otherbot\nDisallow: /\n' } });
    fleet = new Fleet({
      redisUrl: redis.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-robots-')),
      flags: ['--namespace', 'robots', '--allow-private-network', '--rate', 'none', '--domain-concurrency', '4', '--max-depth', '50'],
    });
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    await fleet.cli(['enqueue', ...web.seeds]);
    await fleet.waitUntilDone();

    const served = web.requests.map((request) => request.path);
    expect(served.filter((path) => path === '/robots.txt')).toHaveLength(1);
    expect(served.filter((path) => path.startsWith('/p/1'))).toEqual([]);
    const records = fleet.resultFiles().flatMap((file) => readRecords(file)) as unknown as { url: string; skipped?: string; status?: number }[];
    const skipped = records.filter((record) => record.skipped === 'robots').map((record) => new URL(record.url).pathname);
    expect(skipped.length).toBeGreaterThan(0);
    for (const path of skipped) expect(path.startsWith('/p/1')).toBe(true);
    expect(duplicates(records.map((record) => record.url))).toEqual([]);
    const status = await fleet.status();
    expect(status.deadLettered).toBe(0);
  });
});

describe('sitemaps', () => {
  it('enqueue --sitemap follows a sitemap index with a gzipped child, within scope', async () => {
    const port = await freePort('127.0.0.71');
    const origin = `http://127.0.0.71:${port}`;
    const urlset = (locs: string[]) =>
      `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((loc) => `<url><loc> ${loc} </loc></url>`).join('')}</urlset>`;
    const files: Record<string, Buffer> = {
      '/sitemap_index.xml': Buffer.from(
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/a.xml.gz</loc></sitemap><sitemap><loc>${origin}/b.xml</loc></sitemap></sitemapindex>`,
      ),
      '/a.xml.gz': gzipSync(urlset(Array.from({ length: 300 }, (_, i) => `${origin}/page/${i}?x=1&amp;y=2`))),
      '/b.xml': Buffer.from(urlset([`${origin}/page/0?x=1&amp;y=2`, `${origin}/other`, 'http://elsewhere.test/out-of-scope'])),
    };
    const server: Server = createServer((request, response) => {
      const body = files[request.url ?? ''];
      response.writeHead(body ? 200 : 404, { 'content-type': request.url?.endsWith('.gz') ? 'application/gzip' : 'application/xml' });
      response.end(body ?? 'not found');
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.71', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));

    const result = await runCli(['enqueue', '--sitemap', `${origin}/sitemap_index.xml`, '--namespace', 'sitemaps', '--allow-private-network'], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('accepted 301, duplicate 1');
    expect(result.stderr).toContain('1 out of scope');
    // No worker runs: the URLs wait in their groups' backlogs.
    const client = redis.client();
    try {
      const urls = (await readBacklogEntries(client, 'sitemaps')).map((entry) => entry.url);
      expect(urls).toHaveLength(301);
      expect(urls).toContain(`${origin}/page/7?x=1&y=2`);
    } finally {
      client.disconnect();
    }
  });
});

describe('resumable crawls', () => {
  it('a crawl stopped half-way continues where it stood: no page fetched twice, none forgotten', { timeout: 180_000 }, async () => {
    const host = '127.0.0.72';
    const web = await site({ hosts: [host], pagesPerHost: 40, linksPerPage: 3 });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-resume-'));
    const out = join(dir, 'out.jsonl');
    writeFileSync(join(dir, 'crawlq.json'), JSON.stringify({ fields: [{ name: 'heading', selector: 'h1' }] }));
    const args = ['crawl', ...web.seeds, '--out', out, '--namespace', 'resume', '--allow-private-network', '--rate', '10/1s', '--max-depth', '50', '--config', join(dir, 'crawlq.json')];
    const first = startCli(args, { env: cliEnv(redis.url) });
    await waitFor(() => (web.requests.filter((request) => request.path !== '/robots.txt').length >= 12 ? true : undefined), { timeoutMs: 60_000, what: 'a dozen pages' });
    first.kill('SIGINT');
    expect(await exited(first)).toBe(130); // interrupted (docs/01-getting-started.md, "Exit codes")
    const before = readRecords(out).length;
    expect(before).toBeLessThan(40);
    const status = JSON.parse((await runCli(['status', '--json', '--namespace', 'resume'], { env: cliEnv(redis.url) })).stdout) as { done: boolean };
    expect(status.done).toBe(false);

    const second = await runCli(args, { env: cliEnv(redis.url) });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('resuming the unfinished crawl');
    const records = readRecords(out);
    expect(duplicates(records.map((record) => record.url))).toEqual([]);
    expect(new Set(records.map((record) => record.url))).toEqual(web.reachable({ seeds: web.seeds, maxDepth: 50, scope: 'host' }));
    const pageRequests = web.requests.filter((request) => request.path !== '/robots.txt');
    expect(duplicates(pageRequests.map((request) => request.url))).toEqual([]);
    // User-defined fields from the config file's CSS selectors.
    for (const record of records) expect(record.fields?.heading).toMatch(/^Page \d+/);
  });
});
