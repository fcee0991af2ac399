import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.js';
import { readRecords } from '../support/records.js';

// `crawl --sitemaps` streams sitemap documents from the network
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

interface ProcessMemory {
  readonly pid: number;
  readonly argv: string[];
  readonly maxRss: number;
  /** The most JS heap and buffer memory in use right after a full collection. */
  readonly maxRetained: number;
}

// Loaded into every crawlq process (the crawl and its workers inherit
// NODE_OPTIONS): each reports, as it exits, its peak RSS and the most memory
// it still held right after a full collection. A collection runs whenever the
// JS heap and buffers grew 8 MiB since the last one, so a process holding the
// document is seen holding it, while garbage does not count: reading 50 MiB
// from a socket leaves 13-37 MiB of it in peak RSS, more the more a loaded
// machine delays the timer. The second gc() lets V8 finish freeing the first
// one's buffers, which its sweeper does in the background.
const REPORT_MEMORY = [
  'import { appendFileSync } from "node:fs";',
  'let floor = 0; let maxRetained = 0;',
  'const held = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };',
  'const collect = () => { globalThis.gc(); globalThis.gc(); floor = held(); maxRetained = Math.max(maxRetained, floor); };',
  'setInterval(() => { if (held() > floor + 8 * 1048576) collect(); }, 20).unref();',
  'process.on("exit", () => appendFileSync(process.env.MEMORY_FILE, JSON.stringify({ pid: process.pid, argv: process.argv.slice(2), maxRss: process.resourceUsage().maxRSS * 1024, maxRetained }) + "\\n"));',
].join(' ');

/** Runs `crawl <origin>/ --sitemaps` in namespace `name`; returns its result, records, the processes' memory and the group's in-flight count after. */
async function crawl(name: string, extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), `crawlq-${name}-`));
  const out = join(dir, 'results.jsonl');
  const memoryFile = join(dir, 'memory.jsonl');
  const env = cliEnv(redis.url, { MEMORY_FILE: memoryFile, NODE_OPTIONS: `--expose-gc --import=data:text/javascript,${encodeURIComponent(REPORT_MEMORY)}` });
  const result = await runCli(
    ['crawl', `${origin}/`, '--sitemaps', '--out', out, '--namespace', name, '--allow-private-network', '--rate', 'none', '--max-depth', '0', '--workers', '1', '--state-dir', dir, ...extra],
    { env, timeoutMs: 240_000 },
  );
  const processes = readFileSync(memoryFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as ProcessMemory);
  const groups = await runCli(['group', 'list', '--json', '--namespace', name], { env: cliEnv(redis.url) });
  const group = (JSON.parse(groups.stdout) as { group: string; inFlight: number }[]).find((row) => origin.includes(row.group));
  return { result, records: readRecords(out), processes, inFlight: group?.inFlight };
}

const coordinator = (processes: readonly ProcessMemory[]) => processes.find((row) => row.argv[0] === 'crawl');
const workers = (processes: readonly ProcessMemory[]) => processes.filter((row) => row.argv[0] === 'worker');

describe('crawl --sitemaps streams sitemaps', () => {
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

    // Memory as each process saw it itself. Holding the document would keep
    // the 50 MiB read before the cap after a collection (+52 MiB, seen with a
    // copy of each chunk kept); streaming keeps about one 1 MiB token (+2 MiB,
    // also beside two CPU hogs). Half the document lies between.
    const [smallCoordinator, hugeCoordinator] = [coordinator(small.processes), coordinator(huge.processes)];
    expect(smallCoordinator).toBeDefined();
    expect(hugeCoordinator).toBeDefined();
    const retainedGrowth = hugeCoordinator!.maxRetained - smallCoordinator!.maxRetained;
    const rssGrowth = hugeCoordinator!.maxRss - smallCoordinator!.maxRss;
    const mib = (bytes: number): string => (bytes / MiB).toFixed(1);
    const worst = (rows: readonly ProcessMemory[]): number => Math.max(...workers(rows).map((row) => row.maxRetained));
    process.stdout.write(
      `60 MB sitemap: coordinator held at most ${mib(hugeCoordinator!.maxRetained)} MiB after a collection (baseline crawl ${mib(smallCoordinator!.maxRetained)} MiB, +${mib(retainedGrowth)} MiB); ` +
        `peak RSS ${mib(hugeCoordinator!.maxRss)} MiB (+${mib(rssGrowth)} MiB); worker held at most ${mib(worst(huge.processes))} MiB (baseline ${mib(worst(small.processes))} MiB)\n`,
    );
    expect(retainedGrowth).toBeLessThan(25 * MiB);
    expect(workers(huge.processes)).toHaveLength(1);
    expect(worst(huge.processes)).toBeLessThan(worst(small.processes) + 25 * MiB);
  }, 600_000);
});
