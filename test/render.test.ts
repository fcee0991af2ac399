import { mkdtempSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from '@crawlq/renderer';
import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, waitFor, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserProcessesUnder, workerCommandLines } from './support/processes.js';
import { cliEnv, runCli, startCapturedCli } from './support/cli.js';
import { byHost, sitesArrivalClock } from './support/politeness.js';
import { duplicates, readRecords } from './support/records.js';

const clock = sitesArrivalClock();

const chromium = findChromium();
if (chromium === undefined) console.warn('render e2e skipped: no system Chromium (apt-get install -y chromium)');

let redis: TestRedis;
let site: SpaSite;
const LIVE_CONTENT = '/api/app/live';
const LIVE_CONTENT_HELD_MS = 3_000;

beforeAll(async () => {
  redis = await startTestRedis();
  // The live page's content is held a while at the server, so that a render is surely under way when the test kills the browsers.
  site = await startSpaSite({ appHost: '127.0.0.81', scriptHost: '127.0.0.82', staticHost: '127.0.0.83', appPages: 4, staticPages: 8, answerDelayMs: (path) => (path === LIVE_CONTENT ? LIVE_CONTENT_HELD_MS : 0) });
});
afterAll(async () => {
  await site?.close();
  await redis?.stop();
});

describe.skipIf(chromium === undefined)('--render auto across three workers', () => {
  it('renders the app group and not the static one, finds every link, keeps every host within --rate for every request, and survives its browsers being killed', { timeout: 420_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-render-'));
    const out = join(dir, 'out.jsonl');
    const config = join(dir, 'crawlq.json');
    // "Load more" is clicked on the app's pages only: a rule for its host.
    writeFileSync(config, JSON.stringify({ limitRules: [{ match: '127.0.0.81', clickSelector: '#more', clickSteps: 2 }] }));
    const crawl = startCapturedCli(
      ['crawl', ...site.seeds, '--workers', '3', '--concurrency', '4', '--browser-pages', '2', '--render', 'auto', '--render-timeout', '20s', '--rate', '5/1s', '--domain-concurrency', '2',
        '--allow-private-network', '--max-depth', '20', '--backoff', '200ms', '--attempts', '3', '--namespace', 'render-e2e', '--state-dir', dir, '--config', config, '--out', out],
      { env: cliEnv(redis.url) },
    );
    // The server holds the live page's content for 3 s, and its render waits for it: once the
    // server sees that request, every browser of the crawl is killed, that page's among them.
    const firstAsk = await waitFor(() => site.requests.find((request) => request.path === LIVE_CONTENT), { timeoutMs: 300_000, what: 'the live page to ask for its content', intervalMs: 50 }).catch((error: unknown) => {
      crawl.child.kill('SIGKILL');
      throw new Error(`${String(error)}\n${crawl.output.stderr.slice(-4_000)}\n${site.requests.map((request) => `${request.host} ${request.path} ${request.status}`).join('\n')}`);
    });
    // Workers that drive a browser run with a small young generation (V8's semi-space).
    const workers = workerCommandLines(crawl.child.pid ?? -1);
    expect(workers).toHaveLength(3);
    for (const argv of workers) expect(argv).toContain('--max-semi-space-size=2');
    const browsers = browserProcessesUnder(crawl.child.pid ?? -1);
    expect(browsers.length).toBeGreaterThan(0);
    for (const pid of browsers) process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    // A crawl that does not end names what it still holds, instead of timing the test out silently.
    const patience = new AbortController();
    const exited = await Promise.race([crawl.exited, sleep(180_000, 'running' as const, { signal: patience.signal })]).finally(() => patience.abort());
    if (exited === 'running') {
      const status = await runCli(['status', '--namespace', 'render-e2e', '--json'], { env: cliEnv(redis.url), timeoutMs: 30_000 });
      const groups = await runCli(['group', 'list', '--namespace', 'render-e2e'], { env: cliEnv(redis.url), timeoutMs: 30_000 });
      crawl.child.kill('SIGKILL');
      const recent = site.requests.filter((request) => request.startedAt > killedAt).map((request) => `${request.startedAt - killedAt} ${request.host}${request.path} ${request.status}`);
      throw new Error(`the crawl still ran 180 s after its browsers were killed\nstatus: ${status.stdout}\ngroups: ${groups.stdout}\nrequests since the kill (ms): ${recent.join(', ')}\n${crawl.output.stderr.slice(-6_000)}`);
    }
    expect(exited, crawl.output.stderr).toBe(0);

    const records = readRecords(out);
    const urls = records.map((record) => record.url);
    // Each page once, though browsers died under some of them.
    expect(duplicates(urls)).toEqual([]);
    expect(new Set(urls)).toEqual(new Set([...site.appUrls, ...site.staticUrls]));
    // The live page's render died with its browser, and the page was fetched again after the
    // kill: as a second attempt of its job, or (a later URL of a job of several) handed back
    // to the backlog as a job of its own, so its record may say attempt 1 either way.
    const live = records.find((record) => record.url === site.liveUrl);
    const livePath = new URL(site.liveUrl).pathname;
    const liveAfterKill = site.requests.filter((request) => request.path === livePath && request.startedAt > killedAt);
    expect(liveAfterKill.length, JSON.stringify(live)).toBeGreaterThanOrEqual(1);
    expect(Date.parse(live?.fetchedAt ?? '')).toBeGreaterThan(killedAt);
    expect(crawl.output.stderr).toMatch(/the browser \(pid \d+\) died/);
    expect(firstAsk.startedAt).toBeLessThan(killedAt);
    // Killed before the server answered: the render was cut short, not done.
    expect(firstAsk.endedAt).toBeGreaterThanOrEqual(killedAt);

    // The app group is rendered, and every app page's links are found, "load more" ones included.
    const appRecords = records.filter((record) => site.appUrls.includes(record.url));
    for (const record of appRecords) {
      expect(record.render, record.url).toBeDefined();
      expect(record.render?.complete, JSON.stringify(record.render)).toBe(true);
      expect(record.links, `${record.url} ${JSON.stringify(record.render)}`).toEqual(expect.arrayContaining([...site.expectedLinks(record.url)]));
      expect(record.title).toMatch(/^App page/);
    }
    expect(appRecords.some((record) => record.render?.verdict === 'render')).toBe(true);
    // The static group is judged static: a few samples rendered, the rest plain fetches.
    const staticRecords = records.filter((record) => site.staticUrls.includes(record.url));
    const sampled = staticRecords.filter((record) => record.render !== undefined);
    for (const record of sampled) expect(record.render?.neededBrowser, record.url).toBe(false);
    expect(sampled.length).toBeLessThan(staticRecords.length);
    expect(staticRecords.some((record) => record.render === undefined)).toBe(true);
    // A rendered page's document is the crawler's own fetch: the static host served
    // its pages and robots.txt, nothing else. A static sample whose render a killed
    // browser cut short is fetched again by its job's next attempt: at most one more
    // fetch per browser page that was open at the kill (3 workers x 2 pages).
    const staticRequests = site.requests.filter((request) => request.host === '127.0.0.83');
    const staticPageFetches = staticRequests.filter((request) => request.path !== '/robots.txt');
    expect(new Set(staticPageFetches.map((request) => request.path)).size).toBe(site.staticUrls.length);
    expect(staticPageFetches.length).toBeLessThanOrEqual(site.staticUrls.length + 3 * 2);
    // The script came from the second host, through its own gate; the API calls from the app host.
    expect(site.requests.some((request) => request.path === '/app.js')).toBe(true);
    expect(site.requests.filter((request) => /^\/api\/app\/\d+\/more$/.test(request.path)).length).toBeGreaterThan(0);

    // At the servers: no host ever saw more than 5 request starts in any second,
    // documents, scripts, XHR, polls and robots.txt together.
    for (const [host, requests] of byHost(site.requests)) {
      expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1_000), host).toBeLessThanOrEqual(5);
    }
    // The live page polls on and on: its first poll went through the gate and was not waited
    // for (the page is complete without it), the asks after it were blocked.
    const polls = live?.render?.log.filter((request) => request.url.endsWith('/api/ping')) ?? [];
    expect(polls.filter((request) => request.fate === 'blocked').length).toBe(polls.length - 1);
    expect(polls.find((request) => request.fate !== 'blocked')?.why ?? '', JSON.stringify(polls)).toMatch(/^a poll/);
  });
});
