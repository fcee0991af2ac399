import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.js';
import { readRecords } from '../support/records.js';

// #10 item 4: `crawl --sitemaps` streams sitemap documents from the network
// into the parser. Pages a sitemap lists are crawled while the rest of it is
// still arriving; a 60 MB sitemap is cut at the 50 MiB cap as it streams,
// with the entries before kept and the crawl's memory bounded.
const MiB = 1024 * 1024;
let redis: TestRedis;
let server: Server;
let origin: string;
/** The sitemap robots.txt lists, per test. */
let listed = '/slow.xml';
/** What the server saw and did, in order. */
const events: string[] = [];
/** Resolves the server's wait in the middle of /slow.xml: a listed page was requested. */
let pageRequested: () => void = () => undefined;

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';
const entries = (path: string, from: number, to: number): string =>
  Array.from({ length: to - from }, (_, i) => `<url><loc>${origin}/${path}/${from + i}</loc></url>`).join('');

/** Sends 100 entries, then (when `padTo` is set) 1 MiB comments up to `padTo` MiB, generated as they are sent. */
function sendSitemap(response: ServerResponse, padTo: number): void {
  response.writeHead(200, { 'content-type': 'application/xml' });
  response.write(`${HEAD}${entries('listed', 0, 100)}`);
  const pad = `<!-- ${'x'.repeat(MiB - 9)} -->`;
  let sent = 0;
  const pump = (): void => {
    while (sent < padTo && !response.destroyed) {
      sent += 1;
      if (!response.write(pad)) return void response.once('drain', pump);
    }
    if (!response.destroyed) response.end('</urlset>');
  };
  pump();
}

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (path === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}${listed}\n`);
    } else if (path === '/slow.xml') {
      response.writeHead(200, { 'content-type': 'application/xml' });
      // Five entries, then nothing until a worker asks for one of them (or the client gives up).
      const requested = new Promise<void>((resolve) => (pageRequested = resolve));
      response.once('close', () => {
        if (!response.writableFinished) events.push('sitemap closed unfinished');
        pageRequested();
      });
      response.write(`${HEAD}${entries('slow', 0, 5)}`, () => events.push('sitemap: first part sent'));
      void requested.then(() => {
        if (response.destroyed) return;
        events.push('sitemap: rest sent');
        response.end(`${entries('slow', 5, 10)}</urlset>`);
      });
    } else if (path === '/small.xml') {
      sendSitemap(response, 0);
    } else if (path === '/huge.xml') {
      sendSitemap(response, 60);
    } else {
      if (path.startsWith('/slow/') && !events.some((event) => event.startsWith('page '))) events.push(`page ${path} requested`);
      if (path.startsWith('/slow/')) pageRequested();
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html><title>page</title></html>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  origin = `http://127.0.0.2:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

interface PeakRss {
  readonly pid: number;
  readonly argv: string[];
  readonly maxRss: number;
}

// Loaded into every crawlq process (the crawl and its workers inherit
// NODE_OPTIONS): each reports its own peak RSS as it exits. A garbage
// collection whenever the JS heap and buffers grew 8 MiB since the last one
// makes the peak tell memory held from garbage V8 had not collected yet
// (reading 50 MiB from a socket leaves 30 MiB of that behind, even when
// nothing is kept).
const REPORT_PEAK_RSS = [
  'import { appendFileSync } from "node:fs";',
  'let floor = 0;',
  'setInterval(() => { const m = process.memoryUsage(); if (m.heapUsed + m.arrayBuffers > floor + 8 * 1048576) { globalThis.gc(); const after = process.memoryUsage(); floor = after.heapUsed + after.arrayBuffers; } }, 20).unref();',
  'process.on("exit", () => appendFileSync(process.env.PEAK_RSS_FILE, JSON.stringify({ pid: process.pid, argv: process.argv.slice(2), maxRss: process.resourceUsage().maxRSS * 1024 }) + "\\n"));',
].join(' ');

/** Runs `crawl <origin>/ --sitemaps` in namespace `name`; returns its result, records, the processes' peak RSS and the group's in-flight count after. */
async function crawl(name: string, extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), `crawlq-${name}-`));
  const out = join(dir, 'results.jsonl');
  const rssFile = join(dir, 'rss.jsonl');
  const env = cliEnv(redis.url, { PEAK_RSS_FILE: rssFile, NODE_OPTIONS: `--expose-gc --import=data:text/javascript,${encodeURIComponent(REPORT_PEAK_RSS)}` });
  const result = await runCli(
    ['crawl', `${origin}/`, '--sitemaps', '--out', out, '--namespace', name, '--allow-private-network', '--rate', 'none', '--max-depth', '0', '--workers', '1', '--state-dir', dir, ...extra],
    { env, timeoutMs: 240_000 },
  );
  const processes = readFileSync(rssFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as PeakRss);
  const groups = await runCli(['group', 'list', '--json', '--namespace', name], { env: cliEnv(redis.url) });
  const group = (JSON.parse(groups.stdout) as { group: string; inFlight: number }[]).find((row) => origin.includes(row.group));
  return { result, records: readRecords(out), processes, inFlight: group?.inFlight };
}

const coordinator = (processes: readonly PeakRss[]) => processes.find((row) => row.argv[0] === 'crawl');
const workers = (processes: readonly PeakRss[]) => processes.filter((row) => row.argv[0] === 'worker');

describe('crawl --sitemaps streams sitemaps (#10)', () => {
  it('crawls the first entries of a sitemap while the server still holds the rest', async () => {
    listed = '/slow.xml';
    // Long enough for a worker to start on a loaded machine: the server holds the sitemap until one asks for a page.
    const { result, records, inFlight } = await crawl('sitemap-slow', ['--request-timeout', '60s']);
    expect(result.code, result.stderr).toBe(0);
    // Seen at the server: a listed page was requested before the sitemap's end was sent.
    expect(events).toEqual(['sitemap: first part sent', expect.stringMatching(/^page \/slow\/[0-4] requested$/), 'sitemap: rest sent']);
    expect(result.stderr).toContain('1 listed in robots.txt, 10 URLs, 10 enqueued, 0 out of scope, 0 failed');
    const urls = new Set(records.map((record) => record.url));
    expect(urls).toEqual(new Set([`${origin}/`, ...Array.from({ length: 10 }, (_, i) => `${origin}/slow/${i}`)]));
    expect(inFlight).toBe(0);
  }, 300_000);

  it('cuts a 60 MB sitemap at the cap while it streams: entries before kept, memory far below the document size', async () => {
    // The same crawl with the same 100 entries, without the 60 MB behind them: the baseline.
    listed = '/small.xml';
    const small = await crawl('sitemap-small');
    expect(small.result.code, small.result.stderr).toBe(0);
    expect(small.result.stderr).toContain('1 listed in robots.txt, 100 URLs, 100 enqueued, 0 out of scope, 0 failed');

    listed = '/huge.xml';
    const huge = await crawl('sitemap-huge');
    expect(huge.result.code, huge.result.stderr).toBe(0);
    expect(huge.result.stderr).toMatch(new RegExp(`warning: sitemap ${origin}/huge.xml skipped: .*52428800 bytes`));
    expect(huge.result.stderr).toContain('1 listed in robots.txt, 100 URLs, 100 enqueued, 0 out of scope, 1 failed');
    expect(new Set(huge.records.map((record) => record.url))).toEqual(new Set([`${origin}/`, ...Array.from({ length: 100 }, (_, i) => `${origin}/listed/${i}`)]));
    expect(huge.inFlight).toBe(0);

    // Peak RSS as each process saw it itself. Holding the document would add
    // at least the 50 MiB read before the cap to the coordinator.
    const [smallCoordinator, hugeCoordinator] = [coordinator(small.processes), coordinator(huge.processes)];
    expect(smallCoordinator).toBeDefined();
    expect(hugeCoordinator).toBeDefined();
    const growth = hugeCoordinator!.maxRss - smallCoordinator!.maxRss;
    const workerPeak = Math.max(...workers(huge.processes).map((row) => row.maxRss));
    process.stdout.write(
      `60 MB sitemap: coordinator peak RSS ${(hugeCoordinator!.maxRss / MiB).toFixed(0)} MiB (baseline crawl ${(smallCoordinator!.maxRss / MiB).toFixed(0)} MiB, +${(growth / MiB).toFixed(1)} MiB); worker peak ${(workerPeak / MiB).toFixed(0)} MiB\n`,
    );
    expect(growth).toBeLessThan(35 * MiB);
    expect(workers(huge.processes)).toHaveLength(1);
    expect(workerPeak).toBeLessThan(Math.max(...workers(small.processes).map((row) => row.maxRss)) + 35 * MiB);
  }, 600_000);
});
