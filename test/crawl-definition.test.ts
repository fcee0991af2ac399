import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite, type RequestRecord } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, waitFor, widestGaps } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { sitesArrivalClock } from './support/politeness.js';
import { readRecords } from './support/records.js';

// crawl-shaping options are the fleet's, set where the crawl
// starts (enqueue, config set), and workers started without flags follow them.
let redis: TestRedis;
let fleet: Fleet | undefined;
const sites: DemoSite[] = [];
const clock = sitesArrivalClock();

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await Promise.all(sites.splice(0).map((site) => site.close()));
});
afterAll(async () => redis.stop());

async function site(spec: Parameters<typeof startDemoSite>[0]): Promise<DemoSite> {
  const started = await startDemoSite(spec);
  sites.push(started);
  return started;
}

/** Workers given no crawl flag at all: only where the crawl is and their own concurrency. */
function bareFleet(namespace: string): Fleet {
  return new Fleet({ redisUrl: redis.url, dir: mkdtempSync(join(tmpdir(), 'crawlq-def-')), flags: ['--namespace', namespace, '--concurrency', '8'] });
}

function pageRequests(requests: readonly RequestRecord[]): RequestRecord[] {
  return requests.filter((request) => request.path !== '/robots.txt');
}

/**
 * The gaps between requests as the server saw them, each as wide as it can
 * have been: the site stamps a request when this process's loop gets to it,
 * and a stall of the loop stamps one late (see ArrivalClock).
 */
function gaps(requests: readonly RequestRecord[]): number[] {
  return widestGaps(requests.map((request) => clock.arrivalOf(request.startedAt)));
}

/** Arrival jitter the gate's safety margin absorbs (half of the 50 ms default). */
const TOLERANCE_MS = 25;

describe('one crawl definition for the fleet', () => {
  it('enqueue with crawl flags, three workers without: the server sees only what the definition allows', { timeout: 240_000 }, async () => {
    const web = await site({ hosts: ['127.0.0.71'], pagesPerHost: 60, linksPerPage: 3 });
    const namespace = 'def-enqueue';
    const env = cliEnv(redis.url);
    // The README's multi-machine recipe: the crawl's flags only on enqueue.
    const enqueued = await runCli(
      ['enqueue', ...web.seeds, '--namespace', namespace, '--allow-private-network', '--max-depth', '1', '--rate', '1/1s', '--user-agent', 'fleet-bot/1'],
      { env },
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);

    fleet = bareFleet(namespace);
    for (let i = 0; i < 3; i += 1) await fleet.start();
    await fleet.waitUntilDone();

    // Depth 1 from the seed, not the workers' default 5.
    const expected = web.reachable({ seeds: web.seeds, maxDepth: 1, scope: 'host' });
    const fetched = new Set(pageRequests(web.requests).map((request) => request.url));
    expect(fetched).toEqual(expected);
    const records = fleet.resultFiles().flatMap((file) => readRecords(file));
    expect(new Set(records.map((record) => record.url))).toEqual(expected);
    // The definition's user agent on every request, robots.txt included.
    expect(new Set(web.requests.map((request) => request.userAgent))).toEqual(new Set(['fleet-bot/1']));
    // 1/1s from the definition (the workers' own default is 2/1s): every start at least a second after the previous.
    expect(web.requests.length).toBeGreaterThanOrEqual(expected.size);
    for (const gap of gaps(web.requests)) expect(gap).toBeGreaterThanOrEqual(1_000 - TOLERANCE_MS);

    const shown = await fleet.cli(['config', 'show', '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const definition = JSON.parse(shown.stdout) as { version: number; setBy: string; values: Record<string, unknown> };
    expect(definition).toMatchObject({ version: 1, values: { maxDepth: 1, rate: { max: 1, durationMs: 1_000 }, userAgent: 'fleet-bot/1' } });
    expect(definition.setBy).toMatch(/^enqueue on /);
  });

  it('a worker given a conflicting crawl flag exits 2 with one line naming the option, the fleet value and the fix', { timeout: 150_000 }, async () => {
    const namespace = 'def-conflict';
    const env = cliEnv(redis.url);
    const set = await runCli(['config', 'set', '--namespace', namespace, '--max-depth', '1'], { env });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('crawl definition version 1 (new): --max-depth 1');

    const out = join(mkdtempSync(join(tmpdir(), 'crawlq-def-')), 'out.jsonl');
    // The fix names the command as the operator invoked it (the launcher says how), not always `crawlq`.
    const refused = await runCli(['worker', '--namespace', namespace, '--max-depth', '3', '--out', out], { env: { ...env, CRAWLQ_INVOKED_AS: 'npx crawlq' } });
    expect(refused.code).toBe(2);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^crawlq: --max-depth: /);
    expect(lines[0]).toContain('given 3');
    expect(lines[0]).toContain('(version 1) has 1');
    expect(lines[0]).toContain('`npx crawlq config set --max-depth 3 --namespace def-conflict`');

    // The same through the environment, named the same way.
    const fromEnv = await runCli(['worker', '--namespace', namespace, '--out', out], { env: { ...env, CRAWLQ_MAX_DEPTH: '4' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('--max-depth: this process was given 4');
  });

  it('config set --rate mid-crawl slows every running worker down; --user-agent reaches them too', { timeout: 240_000 }, async () => {
    const web = await site({ hosts: ['127.0.0.72'], pagesPerHost: 300, linksPerPage: 4 });
    const namespace = 'def-live';
    fleet = bareFleet(namespace);
    const enqueued = await fleet.cli(['enqueue', ...web.seeds, '--allow-private-network', '--max-depth', '50', '--rate', '4/1s', '--domain-concurrency', '4', '--ignore-robots']);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await fleet.start();
    await fleet.start();
    await waitFor(() => (web.requests.length >= 8 ? true : undefined), { timeoutMs: 60_000, what: 'the crawl to get going' });

    const set = await fleet.cli(['config', 'set', '--rate', '1/1s', '--user-agent', 'slower-bot/2']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^crawl definition version 2: /);
    expect(set.stdout).toContain('--rate 1/1s');
    expect(set.stdout).toContain('--user-agent slower-bot/2');
    const changedAt = performance.timeOrigin + performance.now();
    // A change reaches running workers within a few seconds; judge what the server saw after that.
    const settledAt = changedAt + 3_000;
    const after = () => web.requests.filter((request) => request.startedAt >= settledAt);
    await waitFor(() => (after().length >= 6 ? true : undefined), { timeoutMs: 90_000, what: 'requests after the change' }).catch((error: unknown) => {
      throw new Error(`${String(error)}; ${web.requests.length} requests in all; worker logs:\n${fleet?.logs.join('\n---\n') ?? ''}`);
    });

    for (const gap of gaps(after())) expect(gap).toBeGreaterThanOrEqual(1_000 - TOLERANCE_MS);
    expect(new Set(after().map((request) => request.userAgent))).toEqual(new Set(['slower-bot/2']));
    // Before the change the workers used the enqueued user agent.
    expect(web.requests[0]?.userAgent).not.toBe('slower-bot/2');
    for (const log of fleet.logs) expect(log).toContain("following the fleet's crawl definition version 2");
  });
});
