import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import { freePort, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { readRecords } from './support/records.js';

// robots.txt that fails in the ways real sites fail, judged at the server
// (what was requested, when) and in what the crawl reports and dead-letters.

interface Hit {
  readonly path: string;
  readonly at: number;
}

/** A loopback site with its own robots.txt behaviour; every request is logged with its arrival time. */
interface Site {
  readonly host: string;
  readonly origin: string;
  readonly hits: Hit[];
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse, robotsHits: number) => void;

let redis: TestRedis;
const servers: Server[] = [];
let fleet: Fleet | undefined;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  })));
});
afterAll(async () => {
  await redis.stop();
});

/** Pages: `/` links to /a, /b, /p/1, /p/2; every other path is a leaf page. */
function page(response: ServerResponse, path: string): void {
  const links = path === '/' ? ['/a', '/b', '/p/1', '/p/2'] : [];
  response.writeHead(200, { 'content-type': 'text/html' });
  response.end(`<html><head><title>${path}</title></head><body>${links.map((link) => `<a href="${link}">${link}</a>`).join(' ')}</body></html>`);
}

async function startSite(host: string, robots: Handler): Promise<Site> {
  const hits: Hit[] = [];
  let robotsHits = 0;
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.push({ path, at: Date.now() });
    if (path === '/robots.txt') {
      robotsHits += 1;
      robots(request, response, robotsHits);
      return;
    }
    page(response, path);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host,
    origin: `http://${host}:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function crawlArgs(dir: string, namespace: string, extra: readonly string[]): string[] {
  return [
    '--out', join(dir, 'out.jsonl'), '--state-dir', dir, '--namespace', namespace, '--allow-private-network',
    '--workers', '2', '--concurrency', '4', '--rate', 'none', '--attempts', '2', '--backoff', '200ms', '--max-depth', '1', ...extra,
  ];
}

interface DeadLetterSummary {
  readonly url: string;
  readonly reason: string;
  readonly status: number | null;
  readonly message: string;
  readonly failedAt: string;
}

async function deadLetters(namespace: string): Promise<DeadLetterSummary[]> {
  const listed = await runCli(['dlq', 'list', '--json', '--namespace', namespace], { env: cliEnv(redis.url) });
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as DeadLetterSummary[];
}

/**
 * The entry `dlq list --json` shows for `url`, once there is one. The wait reads
 * the dead-letter queue in this process (a command started every poll, for the
 * tens of seconds a --max-blocked bound takes, took CPU from the workers); the
 * entry judged is the command's.
 */
async function deadLetterOf(namespace: string, url: string, options: { timeoutMs: number; what: string }): Promise<DeadLetterSummary> {
  const admin = createDeadLetterAdmin({ connection: { url: redis.url }, namespace });
  try {
    await waitFor(async () => ((await admin.list()).some((entry) => entry.url === url) ? true : undefined), { ...options, intervalMs: 200 });
  } finally {
    await admin.close();
  }
  const letter = (await deadLetters(namespace)).find((entry) => entry.url === url);
  expect(letter, `dlq list --json shows ${url}`).toBeDefined();
  return letter!;
}

describe('robots.txt that fails', () => {
  it('429 with Retry-After: 2 is fetched again no sooner than 2 s later, and the crawl finishes', { timeout: 180_000 }, async () => {
    const site = await startSite('127.0.0.70', (_request, response, count) => {
      if (count <= 2) {
        response.writeHead(429, { 'retry-after': '2', 'content-type': 'text/plain' }).end('slow down');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /b\n');
    });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-robots-429-'));
    const result = await runCli(['crawl', `${site.origin}/`, ...crawlArgs(dir, 'robots-429', [])], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);

    const robots = site.hits.filter((hit) => hit.path === '/robots.txt');
    expect(robots.length).toBeGreaterThanOrEqual(3);
    // Each 429 said "come back in 2 s": the next robots.txt request came no sooner.
    expect(robots[1]!.at - robots[0]!.at).toBeGreaterThanOrEqual(2_000);
    expect(robots[2]!.at - robots[1]!.at).toBeGreaterThanOrEqual(2_000);
    // No page before robots.txt was had; then the rules applied (/b disallowed).
    const pages = site.hits.filter((hit) => hit.path !== '/robots.txt');
    expect(Math.min(...pages.map((hit) => hit.at))).toBeGreaterThan(robots[2]!.at);
    expect(pages.map((hit) => hit.path).sort()).toEqual(['/', '/a', '/p/1', '/p/2']);
    const records = readRecords(join(dir, 'out.jsonl'));
    expect(records.find((record) => record.url === `${site.origin}/b`)).toMatchObject({ skipped: 'robots' });
  });

  it('503 forever: the URLs are dead-lettered as robots-unreachable with status 503 within the budget, the progress line says why, and the crawl ends', { timeout: 180_000 }, async () => {
    const site = await startSite('127.0.0.71', (_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('down');
    });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-robots-503-'));
    const seeds = ['/', '/a', '/b', '/c', '/d'].map((path) => `${site.origin}${path}`);
    const started = Date.now();
    const result = await runCli(['crawl', ...seeds, ...crawlArgs(dir, 'robots-503', ['--robots-retry-budget', '8s'])], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);

    const letters = await deadLetters('robots-503');
    expect(letters.map((letter) => letter.url).sort()).toEqual([...seeds].sort());
    for (const letter of letters) {
      expect(letter).toMatchObject({ reason: 'robots-unreachable', status: 503 });
      expect(letter.message).toContain('HTTP 503');
      // Given up once the 8 s budget was spent, not after the 30 min --max-blocked.
      expect(Date.parse(letter.failedAt) - started).toBeGreaterThanOrEqual(8_000);
      expect(Date.parse(letter.failedAt) - started).toBeLessThan(90_000);
    }
    // Only robots.txt was requested, retried with backoff (not hammered).
    const paths = new Set(site.hits.map((hit) => hit.path));
    expect([...paths]).toEqual(['/robots.txt']);
    expect(site.hits.length).toBeGreaterThanOrEqual(2);
    expect(site.hits.length).toBeLessThanOrEqual(10);
    // While it waited, the progress line said which group waits and why.
    expect(result.stderr).toMatch(/1 group waiting: robots\.txt unreachable \(HTTP 503\) \((retry in \d+ s|retrying now)\)/);
  });

  it('a host on a closed port: the crawl ends within the budget with the URLs dead-lettered', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const seeds = ['/x', '/y'].map((path) => `http://127.0.0.72:${port}${path}`);
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-robots-closed-'));
    const started = Date.now();
    const result = await runCli(['crawl', ...seeds, ...crawlArgs(dir, 'robots-closed', ['--robots-retry-budget', '5s'])], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);
    const letters = await deadLetters('robots-closed');
    expect(letters.map((letter) => letter.url).sort()).toEqual([...seeds].sort());
    for (const letter of letters) {
      expect(letter).toMatchObject({ reason: 'robots-unreachable', status: null });
      expect(letter.message).toMatch(/ECONNREFUSED/);
      expect(Date.parse(letter.failedAt) - started).toBeLessThan(90_000);
    }
  });

  it('an over-size robots.txt (11 MiB plain, and a gzip bomb) is cut and its first rules hold: no /p/ page is requested', { timeout: 180_000 }, async () => {
    const rules = 'User-agent: *\nDisallow: /p/\n';
    const filler = `# ${'x'.repeat(1022)}\n`; // 1 KiB a line
    const plain = Buffer.from(rules + filler.repeat(11 * 1024));
    const bomb = gzipSync(Buffer.from(rules + filler.repeat(64 * 1024))); // 64 MiB once inflated
    const big = await startSite('127.0.0.73', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(plain.length) }).end(plain);
    });
    const gzipped = await startSite('127.0.0.74', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb);
    });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-robots-big-'));
    const result = await runCli(['crawl', `${big.origin}/`, `${gzipped.origin}/`, ...crawlArgs(dir, 'robots-big', ['--scope', 'host'])], {
      env: cliEnv(redis.url),
    });
    expect(result.code, result.stderr).toBe(0);
    const records = readRecords(join(dir, 'out.jsonl'));
    for (const site of [big, gzipped]) {
      const paths = site.hits.map((hit) => hit.path);
      expect(paths.filter((path) => path.startsWith('/p/')), site.host).toEqual([]);
      // The rest of the site was crawled: the file was read, not treated as unreachable.
      expect(paths, site.host).toEqual(expect.arrayContaining(['/', '/a', '/b']));
      expect(records.find((record) => record.url === `${site.origin}/p/1`), site.host).toMatchObject({ skipped: 'robots' });
    }
  });

  it('group list says what each waiting group waits for, and --max-blocked dead-letters a long pause near its bound', { timeout: 300_000 }, async () => {
    // The bound: what the case waits out. Long enough for a few `group list` runs on a loaded machine before it.
    const maxBlocked = 20_000;
    const down = await startSite('127.0.0.75', (_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('down');
    });
    const paused = await startSite('127.0.0.76', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-robots-list-'));
    fleet = new Fleet({
      redisUrl: redis.url,
      dir,
      flags: ['--namespace', 'robots-list', '--allow-private-network', '--rate', 'none', '--max-depth', '0', '--robots-retry-budget', '10m', '--max-blocked', `${maxBlocked / 1000}s`],
    });
    await fleet.start();
    await fleet.start();
    const pausedGroup = `${paused.host}:${new URL(paused.origin).port}`;
    const pause = await fleet.cli(['group', 'pause', pausedGroup, '--for', '10m']);
    expect(pause.code, pause.stderr).toBe(0);
    const started = Date.now();
    // Crawl flags go with enqueue too (its planner holds no job longer than --max-blocked).
    const enqueued = await fleet.cli(['enqueue', `${down.origin}/a`, `${paused.origin}/a`, '--max-blocked', `${maxBlocked / 1000}s`]);
    expect(enqueued.code, enqueued.stderr).toBe(0);

    let last = '';
    const listed = await waitFor(async () => {
      const result = await fleet!.cli(['group', 'list']);
      last = `${result.stdout}${result.stderr}`;
      return /robots\.txt unreachable \(HTTP 503\)/.test(result.stdout) ? result.stdout : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'group list to show the robots.txt wait' }).catch((error: unknown) => {
      throw new Error(`${String(error)}; last group list:\n${last}\nworkers:\n${fleet!.logs.join('\n')}`);
    });
    const header = listed.split('\n')[0] ?? '';
    expect(header).toContain('waiting for');
    const line = (group: string) => listed.split('\n').find((row) => row.startsWith(group)) ?? '';
    expect(line(`${down.host}:`)).toMatch(/robots\.txt unreachable \(HTTP 503\), (retry in \d+ s|retrying now)/);
    expect(line(pausedGroup)).toMatch(/admin pause/);

    // The 10 min pause is over the 20 s --max-blocked: its URL is dead-lettered near the bound, saying why.
    const letter = await deadLetterOf('robots-list', `${paused.origin}/a`, { timeoutMs: 150_000, what: 'the paused URL to be dead-lettered' });
    expect(letter).toMatchObject({ reason: 'blocked-group' });
    expect(letter.message).toContain('admin pause');
    expect(Date.parse(letter.failedAt) - started).toBeGreaterThanOrEqual(maxBlocked - 1_000);
    expect(Date.parse(letter.failedAt) - started).toBeLessThan(maxBlocked + 60_000);
    expect(paused.hits.filter((hit) => hit.path === '/a')).toEqual([]);
    // The robots.txt wait counts toward --max-blocked too.
    const downLetter = await deadLetterOf('robots-list', `${down.origin}/a`, { timeoutMs: 90_000, what: 'the URL waiting for robots.txt to be dead-lettered' });
    expect(downLetter).toMatchObject({ reason: 'blocked-group' });
    expect(downLetter.message).toContain('robots.txt unreachable (HTTP 503)');
  });
});
