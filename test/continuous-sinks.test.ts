import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CheckedWarcRecord, readWarcWithAllReaders, startTestPostgres, startTestRedis, type TestPostgres, type TestRedis, waitFor } from '@crawlq/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';

// A continuous crawl into PostgreSQL and a WARC archive, of a loopback site
// whose pages answer each way a revisit can go, some with cache headers that
// lie: one row per page with its change figures, revisit records in the
// archive, and intervals held to --revisit-min and --revisit-max whatever
// the headers say.

const MIN_MS = 2_000;
const MAX_MS = 4_000;
const TEN_YEARS = 'public, max-age=315360000';

interface Fetch {
  readonly path: string;
  readonly at: number;
  readonly status: number;
}

const PAGES = ['/etag', '/modified', '/changes', '/changes-lying', '/clock'] as const;

let redis: TestRedis;
let database: TestPostgres;
let site: Server;
let origin: string;
const fetches: Fetch[] = [];

/**
 * `/` never changes and sends no validator (a byte-identical 200 each time);
 * `/etag` answers If-None-Match with 304 and says `max-age=0`; `/modified`
 * answers If-Modified-Since with 304 and says it is fresh for ten years;
 * `/changes` changes at every fetch; `/changes-lying` too, while saying it
 * is fresh for ten years; `/clock` differs only in a `.clock` the crawl leaves
 * out of its signature (unchanged, but never the same bytes).
 */
function startSite(): Promise<Server> {
  let served = 0;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const send = (status: number, headers: Record<string, string>, body = '') => {
      fetches.push({ path, at: Date.now(), status });
      response.writeHead(status, status === 304 ? headers : { 'content-type': 'text/html; charset=utf-8', ...headers });
      response.end(status === 304 ? undefined : body);
    };
    served += 1;
    const html = (text: string) => `<!doctype html><html><head><title>${path}</title></head><body>${text}<a href="/">home</a></body></html>`;
    switch (path) {
      case '/robots.txt':
        return send(404, {}, 'none');
      case '/':
        return send(200, {}, html(PAGES.map((page) => `<a href="${page}">${page}</a>`).join(' ')));
      case '/etag':
        if (request.headers['if-none-match'] === '"v1"') return send(304, { etag: '"v1"', 'cache-control': 'max-age=0' });
        return send(200, { etag: '"v1"', 'cache-control': 'max-age=0' }, html('same'));
      case '/modified': {
        const lastModified = 'Thu, 01 Jan 2026 00:00:00 GMT';
        if (request.headers['if-modified-since'] === lastModified) return send(304, { 'last-modified': lastModified, 'cache-control': TEN_YEARS });
        return send(200, { 'last-modified': lastModified, 'cache-control': TEN_YEARS }, html('same'));
      }
      case '/changes':
        return send(200, {}, html(`version ${served}`));
      case '/changes-lying':
        return send(200, { 'cache-control': TEN_YEARS }, html(`version ${served}`));
      case '/clock':
        return send(200, {}, html(`same <span class="clock">${served}</span>`));
      default:
        return send(404, {}, 'not found');
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.31', () => resolve(server)));
}

beforeAll(async () => {
  [redis, database, site] = await Promise.all([startTestRedis(), startTestPostgres(), startSite()]);
  origin = `http://127.0.0.31:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  site?.closeAllConnections();
  await Promise.allSettled([new Promise((resolve) => site?.close(resolve)), redis?.stop(), database?.stop()]);
});

const fetchesOf = (path: string) => fetches.filter((fetch) => fetch.path === path);

interface Row {
  url: string;
  writes: number;
  changes: number;
  fetched_at: Date;
  changed_at: Date;
  checked_at: Date;
  first_written_at: Date;
  content_sig: string | null;
}

describe('a continuous crawl into PostgreSQL and WARC', () => {
  it('keeps one row per page with its change figures, archives unchanged revisits as revisit records, and holds lying cache headers to the bounds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-revisit-sinks-'));
    const warcDir = join(dir, 'warc');
    const namespace = 'revisit-sinks';
    const env = cliEnv(redis.url);
    const defined = await runCli(
      ['config', 'set', '--namespace', namespace, '--allow-private-network', '--rate', '20/1s', '--domain-concurrency', '2', '--revisit', 'adaptive', '--revisit-min', `${MIN_MS / 1000}s`, '--revisit-max', `${MAX_MS / 1000}s`, '--revisit-ignore', '.clock'],
      { env },
    );
    expect(defined.code, defined.stderr).toBe(0);
    let log = '';
    const worker = startCli(['worker', '--namespace', namespace, '--concurrency', '4', '--database-url', database.url, '--warc', warcDir], { env });
    worker.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const admin = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      await waitFor(() => (/started \(concurrency/.test(log) ? true : undefined), { timeoutMs: 120_000, what: 'the worker to start' });
      const enqueued = await runCli(['enqueue', `${origin}/`, '--namespace', namespace], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      // Judged by counts, not a time window: every page fetched at least four times (three revisits, the last maybe cut short by the stop).
      await waitFor(() => (['/', ...PAGES].every((path) => fetchesOf(path).length >= 4) ? true : undefined), { timeoutMs: 180_000, intervalMs: 250, what: `four fetches of every page: ${log.slice(-2_000)}` });
    } finally {
      worker.kill('SIGTERM');
      await exited(worker);
    }
    try {
      // Politeness whatever the headers say: no page fetched twice within --revisit-min (less the schedule's 100 ms steps).
      for (const path of ['/', ...PAGES]) {
        const times = fetchesOf(path).map((fetch) => fetch.at);
        for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!, `${path} fetch ${i}`).toBeGreaterThanOrEqual(MIN_MS - 100);
      }
      // A page that changes at every visit but says it is fresh for ten years waits --revisit-max, not ten years
      // (it was fetched four times); its hint held it there however often it changed.
      const lyingGaps = fetchesOf('/changes-lying').map((fetch, i, all) => (i === 0 ? Number.POSITIVE_INFINITY : fetch.at - all[i - 1]!.at));
      expect(Math.min(...lyingGaps)).toBeGreaterThanOrEqual(MAX_MS - 100);
      expect(fetchesOf('/etag').slice(1).every((fetch) => fetch.status === 304)).toBe(true);
      expect(fetchesOf('/modified').slice(1).every((fetch) => fetch.status === 304)).toBe(true);

      // PostgreSQL: one row per URL, change figures by what each page did.
      const { rows } = await admin.query<Row>(
        'SELECT url, writes, changes, fetched_at, changed_at, checked_at, first_written_at, content_sig FROM crawlq_results WHERE namespace = $1 ORDER BY url',
        [namespace],
      );
      const row = (path: string): Row => {
        const found = rows.find((candidate) => candidate.url === `${origin}${path}`);
        if (found === undefined) throw new Error(`no row for ${path}: ${rows.map((candidate) => candidate.url).join(', ')}`);
        return found;
      };
      expect(rows).toHaveLength(1 + PAGES.length);
      for (const stored of rows) {
        expect(stored.content_sig, stored.url).toMatch(/^[0-9a-f]{16}$/);
        expect(stored.changed_at.getTime(), stored.url).toBeLessThanOrEqual(stored.checked_at.getTime());
        expect(stored.fetched_at.getTime(), stored.url).toBeLessThanOrEqual(stored.checked_at.getTime());
      }
      for (const path of ['/', '/etag', '/modified', '/clock']) {
        // Unchanged: written once; each revisit (304 or same content) moved checked_at only.
        expect(row(path), path).toMatchObject({ writes: 1, changes: 0 });
        expect(row(path).changed_at.getTime()).toBe(row(path).fetched_at.getTime());
        expect(row(path).checked_at.getTime(), path).toBeGreaterThan(row(path).fetched_at.getTime() + MIN_MS - 200);
      }
      for (const path of ['/changes', '/changes-lying']) {
        // Changed at every fetch: one change per fetch after the first (a re-run job would count none).
        const served = fetchesOf(path).length;
        expect(row(path).changes, path).toBeGreaterThanOrEqual(2);
        expect(row(path).changes, path).toBeLessThanOrEqual(served - 1);
        expect(row(path).changed_at.getTime(), path).toBe(row(path).fetched_at.getTime());
        expect(row(path).changed_at.getTime(), path).toBeGreaterThan(row(path).first_written_at.getTime());
      }

      // `results stats` sums the change columns.
      const stats = JSON.parse((await runCli(['results', 'stats', '--json', '--namespace', namespace, '--database-url', database.url], { env })).stdout) as Record<string, unknown>;
      expect(stats).toMatchObject({
        changedPages: rows.filter((stored) => stored.changes > 0).length,
        changes: rows.reduce((sum, stored) => sum + stored.changes, 0),
        lastChangedAt: new Date(Math.max(...rows.map((stored) => stored.changed_at.getTime()))).toISOString(),
        lastCheckedAt: new Date(Math.max(...rows.map((stored) => stored.checked_at.getTime()))).toISOString(),
      });
      expect(stats.changedPages).toBe(2);

      // WARC: revisit records for unchanged revisits, naming the response they repeat.
      const records: CheckedWarcRecord[] = [];
      for (const name of readdirSync(warcDir).filter((file) => file.endsWith('.warc.gz')).sort()) records.push(...(await readWarcWithAllReaders(readFileSync(join(warcDir, name)), name)));
      const of = (path: string, type: string) => records.filter((record) => record.headers['warc-target-uri'] === `${origin}${path}` && record.headers['warc-type'] === type);
      const checkRevisits = (path: string, profile: string, atLeast: number) => {
        const [response, ...more] = of(path, 'response');
        expect(more, `${path}: one full response`).toEqual([]);
        const revisits = of(path, 'revisit');
        expect(revisits.length, path).toBeGreaterThanOrEqual(atLeast);
        for (const revisit of revisits) {
          expect(revisit.version).toBe('WARC/1.1');
          expect(revisit.headers['warc-profile'], path).toBe(`http://netpreserve.org/warc/1.1/revisit/${profile}`);
          expect(revisit.headers['warc-refers-to'], path).toBe(response?.headers['warc-record-id']);
          expect(revisit.headers['warc-refers-to-target-uri'], path).toBe(response?.headers['warc-target-uri']);
          expect(revisit.headers['warc-refers-to-date'], path).toBe(response?.headers['warc-date']);
          expect(revisit.headers['warc-payload-digest'], path).toBe(response?.headers['warc-payload-digest']);
          expect(revisit.headers['warc-date']! > response!.headers['warc-date']!, path).toBe(true);
        }
        return revisits;
      };
      for (const revisit of checkRevisits('/etag', 'server-not-modified', 2)) expect(revisit.block.toString('latin1')).toMatch(/^HTTP\/1\.1 304 /);
      checkRevisits('/modified', 'server-not-modified', 2);
      for (const revisit of checkRevisits('/', 'identical-payload-digest', 2)) {
        expect(revisit.block.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
        expect(revisit.headers['warc-truncated']).toBe('length');
      }
      // Same signature, other bytes: archived in full every time; a changing page likewise.
      for (const path of ['/clock', '/changes', '/changes-lying']) {
        expect(of(path, 'revisit'), path).toEqual([]);
        expect(of(path, 'response').length, path).toBeGreaterThanOrEqual(fetchesOf(path).length - 1);
      }
      // Every revisit and response has its request.
      const requests = records.filter((record) => record.headers['warc-type'] === 'request');
      expect(requests.length).toBe(records.filter((record) => record.headers['warc-type'] === 'response' || record.headers['warc-type'] === 'revisit').length);
    } finally {
      await admin.end();
    }
  });
});
