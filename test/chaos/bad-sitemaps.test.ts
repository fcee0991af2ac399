import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.js';
import { readRecords } from '../support/records.js';

// one bad sitemap (404, over 50 MiB) is a warning; the seeds and
// the healthy sitemaps go on.
let redis: TestRedis;
let server: Server;
let origin: string;
const MiB = 1024 * 1024;
const urlset = (locs: string[], tail = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((loc) => `<url><loc>${loc}</loc></url>`).join('')}${tail}</urlset>`;
let gzBomb: Buffer;

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (path === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/missing.xml\nSitemap: ${origin}/huge.xml\nSitemap: ${origin}/good.xml\n`);
    } else if (path === '/good.xml') {
      response.writeHead(200, { 'content-type': 'application/xml' }).end(urlset(Array.from({ length: 20 }, (_, i) => `${origin}/listed/${i}`)));
    } else if (path === '/huge.xml') {
      // 60 MiB, streamed: over the 50 MiB a sitemap may have.
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.write('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
      let sent = 0;
      const pad = `<!-- ${'x'.repeat(MiB - 10)} -->`;
      const pump = () => {
        while (sent < 60) {
          sent += 1;
          if (!response.write(pad)) return void response.once('drain', pump);
        }
        response.end('</urlset>');
      };
      pump();
    } else if (path === '/bomb.xml.gz') {
      response.writeHead(200, { 'content-type': 'application/gzip' }).end(gzBomb);
    } else if (path.startsWith('/listed/') || path === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html><title>page</title></html>');
    } else {
      response.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  origin = `http://127.0.0.2:${(server.address() as { port: number }).port}`;
  // 500 entries, then whitespace to 60 MiB once decompressed (tiny on the wire).
  gzBomb = gzipSync(urlset(Array.from({ length: 500 }, (_, i) => `${origin}/bomb/${i}`), ' '.repeat(60 * MiB)));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

describe('bad sitemaps', () => {
  it('crawl --sitemaps: a 404 and an oversized sitemap are skipped with warnings; the seed and the good sitemap are crawled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-bad-sitemaps-'));
    const out = join(dir, 'results.jsonl');
    const result = await runCli(
      ['crawl', `${origin}/`, '--sitemaps', '--out', out, '--namespace', 'bad-sitemaps', '--allow-private-network', '--rate', 'none', '--max-depth', '0', '--state-dir', dir],
      { env: cliEnv(redis.url), timeoutMs: 240_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`warning: sitemap ${origin}/missing.xml skipped: HTTP 404`);
    expect(result.stderr).toMatch(new RegExp(`warning: sitemap ${origin}/huge.xml skipped: .*`));
    expect(result.stderr).toContain('3 listed in robots.txt, 20 URLs, 20 enqueued, 0 out of scope, 2 failed');
    const urls = new Set(readRecords(out).map((record) => record.url));
    expect(urls).toEqual(new Set([`${origin}/`, ...Array.from({ length: 20 }, (_, i) => `${origin}/listed/${i}`)]));
  }, 300_000);

  it('enqueue --sitemap keeps the entries read before a size error', async () => {
    const result = await runCli(['enqueue', '--sitemap', `${origin}/bomb.xml.gz`, '--namespace', 'sitemap-bomb', '--allow-private-network'], { env: cliEnv(redis.url), timeoutMs: 200_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`warning: sitemap ${origin}/bomb.xml.gz skipped`);
    expect(result.stdout).toContain('accepted 500,');
  }, 240_000);

  it('enqueue --sitemaps reads the robots.txt of seeds given on standard input', async () => {
    const result = await runCli(['enqueue', '--file', '-', '--sitemaps', '--namespace', 'sitemap-stdin', '--allow-private-network'], { env: cliEnv(redis.url), input: `${origin}/\n`, timeoutMs: 200_000 });
    expect(result.code, result.stderr).toBe(0);
    // The seed plus the good sitemap's 20 pages; the two bad sitemaps are warnings.
    expect(result.stdout).toContain('accepted 21,');
    expect(result.stderr).toContain('2 failed');
  }, 240_000);
});
