import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nextSchedule } from '@crawlq/crawler';
import { revisitBuckets, RevisitStore, type RevisitState } from '@crawlq/frontier';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';

// A continuous crawl (--revisit adaptive) seeded from a sitemap, by two
// worker processes, judged from the server's own request log and the
// schedule in Redis:
// - a page whose <lastmod> moves past its last fetch is fetched again soon
//   after the sitemap is read again (as a cron job would), long before its
//   interval; a page whose <lastmod> stays is not fetched before its interval;
//   <changefreq> is the prior a new page's first interval comes from;
// - a front page whose links change (a hub) is revisited more often than a
//   page whose text changes as often, over the same span (an ordering: the
//   counts depend on the machine's load);
// - the messy web: lastmod and changefreq values that mean nothing, entries
//   without a usable loc, a lastmod in the future, and a hub of 5,200 links
//   (past --max-links-per-page) with fragments, mailto, scripts, other hosts
//   and repeats among them.

const HOST = '127.0.0.57';
const MIN_MS = 2_000;
const MAX_MS = 86_400_000;
/** The hub and the plain page both change this often (the server's clock). */
const CHANGE_MS = 20_000;
const ARTICLES = 5_200;
const YEAR_MS = 365 * 86_400_000;
/** The slack a revisit may come early by (the schedule's 100 ms steps and the worker's 1 s). */
const EARLY_SLACK_MS = 1_200;

interface Fetch {
  readonly path: string;
  readonly at: number;
}

let redis: TestRedis;
let site: Server;
let origin: string;
let startedAt = 0;
const fetches: Fetch[] = [];
/** /moving's <lastmod>: two days before the site started, until the test moves it. */
let movingLastmod = '';

const versionNow = (): number => Math.floor((Date.now() - startedAt) / CHANGE_MS);
const html = (title: string, body: string): string => `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

function sitemap(): string {
  const url = (inner: string) => `<url>${inner}</url>`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
    url(`<loc>${origin}/hub</loc><changefreq>always</changefreq>`) +
    url(`<loc>${origin}/leaf</loc><changefreq>always</changefreq>`) +
    url(`<loc>${origin}/moving</loc><lastmod>${movingLastmod}</lastmod><changefreq>yearly</changefreq>`) +
    url(`<loc>${origin}/steady</loc><lastmod>2020-01-01T00:00:00+01:00</lastmod><changefreq>yearly</changefreq>`) +
    url(`<loc>${origin}/future</loc><lastmod>2999-01-01</lastmod><changefreq>yearly</changefreq>`) +
    // Values that mean nothing: ignored, never an error.
    url(`<loc>${origin}/garbage-1</loc><lastmod>yesterday</lastmod><changefreq>sometimes</changefreq>`) +
    url(`<loc>${origin}/garbage-2</loc><lastmod>2024-13-45T99:99:99Z</lastmod><changefreq>HOURLY, or so</changefreq><changefreq/>`) +
    url(`<loc>${origin}/garbage-3</loc><lastmod/><lastmod>{{ page.updated }}</lastmod><changefreq>3600</changefreq>`) +
    url('<loc>   </loc><lastmod>2026-01-01</lastmod>') +
    url('<lastmod>2026-01-01</lastmod><changefreq>daily</changefreq>') +
    url('<loc>javascript:alert(1)</loc><changefreq>daily</changefreq>') +
    url('<loc>http://elsewhere.invalid/out-of-scope</loc><lastmod>2999-01-01</lastmod>') +
    '</urlset>'
  );
}

/** The front page: a list of 5,200 articles that moves on by three at each change, and the mess around it. */
function hub(): string {
  const first = versionNow() * 3;
  const articles = Array.from({ length: ARTICLES }, (_, i) => `<li><a href="/a/${first + i}">article ${first + i}</a></li>`).join('');
  const mess = `<a href="#top">top</a><a href="mailto:desk@news.test">mail</a><a href="javascript:void(0)">menu</a><a href="http://elsewhere.invalid/x">partner</a><a href="/a/${first}#comments">comments</a><a href="/A/../leaf">leaf</a>`;
  return html('front page', `<h1>front page</h1>${mess}<ul>${articles}</ul>`);
}

function startSite(): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    fetches.push({ path, at: Date.now() });
    const send = (status: number, body: string, type = 'text/html; charset=utf-8') => response.writeHead(status, { 'content-type': type }).end(body);
    if (path === '/robots.txt') return send(404, 'none', 'text/plain');
    if (path === '/sitemap.xml') return send(200, sitemap(), 'application/xml');
    if (path === '/hub') return send(200, hub());
    // Its text changes as often as the hub's list; its links never.
    if (path === '/leaf') return send(200, html('leaf', `<p>the weather, version ${versionNow()}</p><a href="/">home</a><a href="/steady">steady</a>`));
    if (/^\/(moving|steady|future|garbage-\d|a\/\d+|)$/.test(path)) return send(200, html(path, `<p>${path} never changes</p><a href="/hub">front page</a>`));
    return send(404, 'not found');
  });
  return new Promise((resolve) => server.listen(0, HOST, () => resolve(server)));
}

beforeAll(async () => {
  [redis, site] = await Promise.all([startTestRedis(), startSite()]);
  origin = `http://${HOST}:${(site.address() as AddressInfo).port}`;
  startedAt = Date.now();
  movingLastmod = new Date(startedAt - 2 * 86_400_000).toISOString();
});
afterAll(async () => {
  site?.closeAllConnections();
  await Promise.allSettled([new Promise((resolve) => site?.close(resolve)), redis?.stop()]);
});

const fetchesOf = (path: string, from = 0): number[] => fetches.filter((fetch) => fetch.path === path && fetch.at >= from).map((fetch) => fetch.at);

describe('a continuous crawl seeded from a sitemap', () => {
  it("takes <lastmod> and <changefreq> as revisit hints, ignores values that mean nothing, and revisits a hub sooner than a page whose text changes as often", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-revisit-sitemaps-'));
    const namespace = 'revisit-sitemaps';
    const env = cliEnv(redis.url);
    const defined = await runCli(
      [
        'config', 'set', '--namespace', namespace, '--allow-private-network', '--rate', '20/1s', '--domain-concurrency', '4',
        '--revisit', 'adaptive', '--revisit-min', `${MIN_MS / 1000}s`, '--revisit-max', '1d',
        // The hub's articles are followed up to the budget; the rest stay in its link set.
        '--max-pages', '40',
      ],
      { env },
    );
    expect(defined.code, defined.stderr).toBe(0);
    const logs: string[] = [];
    const start = (i: number): ChildProcess => {
      const child = startCli(['worker', '--namespace', namespace, '--concurrency', '4', '--out', join(dir, `worker-${i}.jsonl`)], { env });
      const at = logs.push('') - 1;
      child.stderr?.on('data', (chunk: Buffer) => (logs[at] += chunk.toString()));
      return child;
    };
    const workers = [0, 1].map(start);
    const client: Redis = redis.client();
    const store = new RevisitStore({ redis: client, namespace, buckets: revisitBuckets(10_000_000) });
    const stateOf = (path: string): Promise<RevisitState | undefined> => store.read(`${origin}${path}`);
    // The hub's and the leaf's schedules as last read by a wait, for a failure to show.
    const lastStates: Record<string, RevisitState | undefined> = {};
    const context = () =>
      `${logs.join('\n').slice(-3_000)}\nfetches: ${JSON.stringify(Object.fromEntries(['/hub', '/leaf', '/moving', '/steady', '/future'].map((path) => [path, fetchesOf(path).length])))}` +
      `\nat ${Date.now()}, last fetches of /hub: ${JSON.stringify(fetchesOf('/hub').slice(-3))}, of /leaf: ${JSON.stringify(fetchesOf('/leaf').slice(-3))}\nschedules: ${JSON.stringify(lastStates)}`;
    const policy = { mode: 'adaptive' as const, minMs: MIN_MS, maxMs: MAX_MS };
    try {
      await waitFor(() => (logs.every((log) => /started \(concurrency/.test(log)) ? true : undefined), { timeoutMs: 120_000, what: 'both workers to start' });
      const first = await runCli(['enqueue', '--sitemap', `${origin}/sitemap.xml`, '--namespace', namespace], { env });
      expect(first.code, first.stderr).toBe(0);
      // 12 entries: 2 without a loc, 1 not http(s), 1 on another host; 8 pages enqueued.
      expect(first.stderr).toMatch(/sitemaps: 9 URLs listed, 1 out of scope, 0 failed\n/);
      expect(first.stdout).toMatch(/accepted 8,/);

      // Every page of the sitemap fetched and scheduled (the pages with garbage hints too).
      const sitemapPages = ['/hub', '/leaf', '/moving', '/steady', '/future', '/garbage-1', '/garbage-2', '/garbage-3'];
      const states = await waitFor(
        async () => {
          const all = await Promise.all(sitemapPages.map(stateOf));
          return all.every((state) => state !== undefined) ? new Map(sitemapPages.map((path, i) => [path, all[i]!])) : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500, what: () => `every sitemap page to be fetched and scheduled: ${context()}` },
      );
      // <changefreq>yearly (held to --revisit-max) is the prior of the first interval; the page was not revisited yet (it waits minutes).
      const yearly = nextSchedule({ policy, previousMs: undefined, changed: true, priorMs: YEAR_MS }).intervalMs;
      expect(yearly).toBeGreaterThan(240_000);
      for (const path of ['/moving', '/steady', '/future']) {
        const intervalMs = states.get(path)?.intervalMs ?? 0;
        expect(intervalMs, path).toBeGreaterThanOrEqual(yearly);
        expect(intervalMs, path).toBeLessThanOrEqual(yearly * (1 + 1 / 1024));
        expect(fetchesOf(path), path).toHaveLength(1);
      }

      // /moving changes after its fetch and the sitemap says so; it is read again (as a cron job would).
      const moving = states.get('/moving')!;
      const steady = states.get('/steady')!;
      movingLastmod = new Date().toISOString();
      const reread = Date.now();
      const second = await runCli(['enqueue', '--sitemap', `${origin}/sitemap.xml`, '--namespace', namespace], { env });
      expect(second.code, second.stderr).toBe(0);
      // Made due: /moving and /future (a lastmod in the future counts as now); not /steady, nor the garbage.
      expect(second.stderr).toMatch(/sitemaps: 9 URLs listed, 1 out of scope, 0 failed, 2 known due again \(newer lastmod\)\n/);
      expect(second.stdout).toMatch(/accepted 0,/);
      const refetched = await waitFor(() => fetchesOf('/moving', reread)[0], { timeoutMs: 90_000, what: () => `/moving fetched again: ${context()}` });
      // Soon: long before the interval it had (minutes away still).
      expect(refetched).toBeLessThan((moving.dueAt ?? 0) - 60_000);
      await waitFor(() => fetchesOf('/future', reread)[0], { timeoutMs: 90_000, what: () => `/future fetched again: ${context()}` });

      // The hub and the plain page, once the hub is known as one: the same span, counted at the server.
      await waitFor(async () => ((await stateOf('/hub'))?.hub === true && fetchesOf('/leaf').length >= 3 ? true : undefined), {
        timeoutMs: 120_000,
        intervalMs: 500,
        what: () => `/hub to be seen as a hub: ${context()}`,
      });
      const spanFrom = Date.now();
      const spanTo = await waitFor(
        async () => {
          [lastStates['/hub'], lastStates['/leaf']] = await Promise.all([stateOf('/hub'), stateOf('/leaf')]);
          return fetchesOf('/hub', spanFrom).length >= 15 ? Date.now() : undefined;
        },
        { timeoutMs: 180_000, what: () => `15 more fetches of /hub since ${spanFrom}: ${context()}` },
      );
      const hubCount = fetchesOf('/hub', spanFrom).filter((at) => at <= spanTo).length;
      const leafCount = fetchesOf('/leaf', spanFrom).filter((at) => at <= spanTo).length;
      // 15 and 9 in 47 s on a quiet machine: the hub's intervals are about half the other's.
      expect(leafCount, `/hub ${hubCount}, /leaf ${leafCount} in ${spanTo - spanFrom} ms; ${context()}`).toBeLessThan(hubCount);
      const [hubState, leafState] = await Promise.all([stateOf('/hub'), stateOf('/leaf')]);
      expect(hubState).toMatchObject({ hub: true, links: expect.any(Number) as number });
      // Its links are the same at every change: a link set, no hub.
      expect(leafState).toMatchObject({ hub: false, links: expect.any(Number) as number });

      // /steady's lastmod never moved: not fetched before its interval (minutes; the slack of the schedule's steps allowed).
      expect(fetchesOf('/steady').filter((at) => at < steady.fetchedAt + steady.intervalMs - EARLY_SLACK_MS)).toHaveLength(1);
    } finally {
      workers.forEach((child) => child.kill('SIGTERM'));
    }
    await Promise.all(workers.map((child) => exited(child)));
    // The schedule: every known URL due once, however the hints moved it.
    const audit = await store.audit();
    expect(audit, JSON.stringify(audit)).toMatchObject({ missing: 0, duplicated: 0 });
    // The budget held: the sitemap's 8 pages and the hub's first 32 articles (or the index), whatever the hub listed.
    expect((await store.counters()).known).toBeLessThanOrEqual(40);
  }, 480_000);
});
