import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, startCli } from '../support/cli.js';
import { descendantsOf, processTable, rssBytes } from '../support/processes.js';
import { readRecords } from '../support/records.js';

// a page with a huge number of distinct same-host links (under the
// body cap) must not take a worker down: links are capped per page, the record
// stays bounded, the admitted count equals the cap, the worker stays small.
// One of the linked pages has a 2 MB title: its record keeps 1,000 code points.
const LINKS = 250_000;
const EMOJI = '\u{1F600}';
const CAP = 400;
let redis: TestRedis;
let server: Server;
let base: string;
const served = new Set<string>();

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    served.add(path);
    if (path === '/robots.txt') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' });
    if (path === '/p/0') {
      response.end(`<html><title>${EMOJI.repeat(500_000)}</title></html>`); // 2 MB of 4-byte code points
      return;
    }
    if (path !== '/') {
      response.end('<html><title>leaf</title></html>');
      return;
    }
    // Generated as it is sent: ~5 MB, under the 10 MiB body cap.
    response.write('<html><head><title>bomb</title></head><body>');
    let next = 0;
    const pump = () => {
      while (next < LINKS) {
        let chunk = '';
        for (let end = Math.min(LINKS, next + 5_000); next < end; next += 1) chunk += `<a href="/p/${next}">${next}</a>`;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end('</body></html>');
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  base = `http://127.0.0.2:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

describe('a link bomb', () => {
  it(`keeps ${CAP} of ${LINKS} links, admits exactly ${CAP}, and the worker stays alive and small`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-link-bomb-'));
    const out = join(dir, 'results.jsonl');
    const child = startCli(
      ['crawl', base, '--out', out, '--namespace', 'link-bomb', '--allow-private-network', '--rate', 'none', '--domain-concurrency', '8',
        '--max-depth', '1', '--max-links-per-page', String(CAP), '--workers', '1', '--state-dir', dir],
      { env: cliEnv(redis.url) },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin?.end();
    // Peak RSS of the worker process(es), sampled from /proc while the crawl runs.
    let peakRss = 0;
    const workers = new Set<number>();
    const sampler = setInterval(() => {
      for (const pid of descendantsOf(child.pid ?? -1)) {
        if (!processTable().some((row) => row.pid === pid && row.cmdline.includes(' worker '))) continue;
        workers.add(pid);
        peakRss = Math.max(peakRss, rssBytes(pid) ?? 0);
      }
    }, 100);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearInterval(sampler);
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/worker \d+ exited/); // never crashed and respawned

    const records = readRecords(out);
    const bomb = records.find((record) => record.url === base);
    expect(bomb).toBeDefined();
    expect(bomb?.links).toHaveLength(CAP);
    expect(bomb?.linksFound).toBe(LINKS);
    expect(bomb?.linksTruncated).toBe(LINKS - CAP);
    expect(bomb?.enqueued).toBe(CAP);
    // Exactly the cap was admitted and fetched, once each.
    expect(records.filter((record) => record.url !== base)).toHaveLength(CAP);
    expect([...served].filter((path) => path.startsWith('/p/'))).toHaveLength(CAP);
    // Record caps: the 2 MB title is cut to 1,000 whole emoji and the record says so.
    const emoji = records.find((record) => record.url === `${base}p/0`);
    expect(emoji?.title).toBe(EMOJI.repeat(1_000));
    expect(emoji?.truncated).toEqual(['title']);
    expect(records.filter((record) => record.truncated !== undefined)).toHaveLength(1);
    // The record itself is bounded: the kept links plus a few hundred bytes.
    expect(JSON.stringify(bomb).length).toBeLessThan(CAP * 100 + 2_000);
    expect(workers.size).toBe(1);
    // Parsing a 5 MB page costs memory, but not the gigabytes a quarter million jobs did.
    expect(peakRss).toBeGreaterThan(0);
    expect(peakRss).toBeLessThan(700 * 1024 * 1024);
    process.stdout.write(`link bomb: worker peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MiB\n`);
  }, 300_000);
});
