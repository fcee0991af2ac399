import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChangingSite, type ChangingSite } from '@crawlq/demo-site';
import { revisitBuckets, RevisitStore } from '@crawlq/frontier';
import { freePort, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { samples } from './support/metrics-text.js';

// A continuous crawl of a site whose pages change at random (seeded), by 3
// worker processes, for a fixed wall time: conditional requests, the 304 path,
// scheduling without a fetch inside a URL's interval, politeness at the
// server, and the schedule intact after a worker's kill -9 and a Redis
// restart. The freshness figures (adaptive vs fixed) are measured in
// bench/revisit-freshness.ts, not asserted here.

const INTERVAL_MS = 6_000;
const RATE_PER_S = 10;
const RUN_MS = 45_000;

let redis: TestRedis;
let site: ChangingSite;

beforeAll(async () => {
  redis = await startTestRedis({ appendOnly: true });
  site = await startChangingSite({ pages: 60, seed: 7, pageBytes: 4_096 });
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

describe('a continuous crawl (--revisit)', () => {
  it('revisits with conditional requests, never inside an interval, politely, and keeps its schedule through a kill -9 and a Redis restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-revisit-'));
    const namespace = 'revisit';
    const env = cliEnv(redis.url);
    const defined = await runCli(
      ['config', 'set', '--namespace', namespace, '--allow-private-network', '--rate', `${RATE_PER_S}/1s`, '--domain-concurrency', '2', '--revisit', `${INTERVAL_MS / 1000}s`, '--revisit-ignore', '.clock'],
      { env },
    );
    expect(defined.code, defined.stderr).toBe(0);
    const logs: string[] = [];
    /** When Redis was back after its restart (the site's clock): fetches begun before then may have been lost. */
    let disruptedUntil = Number.POSITIVE_INFINITY;
    // Worker 1 (never killed) serves /metrics.
    const metricsPort = await freePort();
    const start = (i: number): ChildProcess => {
      const metrics = i === 1 ? ['--metrics-port', String(metricsPort)] : [];
      const child = startCli(['worker', '--namespace', namespace, '--concurrency', '4', '--stall-timeout', '5s', ...metrics, '--out', join(dir, `worker-${i}-${logs.length}.jsonl`)], { env });
      const at = logs.push('') - 1;
      child.stderr?.on('data', (chunk: Buffer) => (logs[at] += chunk.toString()));
      return child;
    };
    const workers = [0, 1, 2].map(start);
    const revisitedPages = () => {
      const fetches = new Map<number, number>();
      for (const request of site.requests) if (request.page >= 0) fetches.set(request.page, (fetches.get(request.page) ?? 0) + 1);
      return [...fetches.values()].filter((count) => count >= 2).length;
    };
    try {
      // Timed from when the workers are up: starting them takes seconds to a minute on a loaded machine.
      await waitFor(() => (logs.every((log) => /started \(concurrency/.test(log)) ? true : undefined), { timeoutMs: 120_000, what: 'every worker to start' });
      const began = Date.now();
      const enqueued = await runCli(['enqueue', `${site.origin}/`, '--namespace', namespace], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      await waitFor(() => (site.requests.some((request) => request.conditional) ? true : undefined), { timeoutMs: 60_000, what: 'a first conditional request' });
      // A worker killed mid-crawl, and a replacement.
      workers[0]?.kill('SIGKILL');
      await exited(workers[0]!);
      workers[0] = start(0);
      // Redis restarted (its append-only file keeps the schedule); the workers ride it out.
      await redis.halt();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await redis.start();
      disruptedUntil = Date.now();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, began + RUN_MS - Date.now())));
      // Revisits are judged once most pages have had one (a bound, not a count in a window).
      await waitFor(() => (revisitedPages() > site.pages.length / 2 ? true : undefined), { timeoutMs: 120_000, what: 'most pages to be revisited' });

      // The figures of the running crawl: status (JSON and text), group list's footer, /metrics.
      type Revisits = { known: number; dueNow: number; dueNextHour: number; changed: number; unchanged: number; notModified: number; bytesSaved: number; fetched: number };
      const { revisits, done } = await waitFor(
        async () => {
          const statusJson = await runCli(['status', '--json', '--namespace', namespace], { env });
          expect(statusJson.code, statusJson.stderr).toBe(0);
          const status = JSON.parse(statusJson.stdout) as { done: boolean; revisits: Revisits };
          return status.revisits.known === site.pages.length + 1 ? status : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1_000, what: 'every page to be known' },
      ).catch(async (error: unknown) => {
        // Which pages the schedule lacks: never served at all, or served and then lost.
        const served = new Set(site.requests.map((request) => request.page));
        const never = site.pages.map((page) => page.index).filter((page) => !served.has(page));
        const status = await runCli(['status', '--json', '--namespace', namespace], { env });
        throw new Error(`${String(error)}; pages never served: ${never.join(', ') || 'none'}; status ${status.stdout}`);
      });
      expect(done).toBe(false);
      // Every page and the index are known; each has a schedule entry within the hour (6 s intervals, 10 min leases).
      expect(revisits.known).toBe(site.pages.length + 1);
      expect(revisits.dueNextHour).toBeGreaterThanOrEqual(revisits.known);
      expect(revisits.dueNextHour).toBeGreaterThanOrEqual(revisits.dueNow);
      expect(revisits.changed).toBeGreaterThan(0);
      expect(revisits.notModified).toBeGreaterThan(0);
      // Each 304 saved about a full page (4 KiB here, the size kept within 5%).
      expect(revisits.bytesSaved).toBeGreaterThanOrEqual(revisits.notModified * 4_096 * 0.9);
      const statusText = await runCli(['status', '--namespace', namespace], { env });
      expect(statusText.stdout).toMatch(new RegExp(`known URLs\\s+${site.pages.length + 1} \\(0 retired\\)`));
      expect(statusText.stdout).toMatch(/due\s+\d+ now, \d+ within the next hour/);
      expect(statusText.stdout).toMatch(/bytes saved\s+[\d.]+ (B|KiB|MiB)/);
      const groups = await runCli(['group', 'list', '--namespace', namespace], { env });
      expect(groups.stdout).toMatch(/continuous crawl, all groups:\n\s+known URLs\s+\d+/);
      const metrics = await waitFor(
        async () => {
          const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((response) => response.text()).catch(() => '');
          const values = samples(text);
          return (values.get('crawlq_revisit_urls{state="known"}') ?? 0) === site.pages.length + 1 ? values : undefined;
        },
        { timeoutMs: 30_000, what: 'the revisit gauges' },
      );
      expect(metrics.get('crawlq_revisit_fetches{outcome="not_modified"}')).toBeGreaterThanOrEqual(revisits.notModified);
      expect(metrics.get('crawlq_revisit_fetches{outcome="first"}')).toBeGreaterThanOrEqual(site.pages.length + 1);
      expect(metrics.get('crawlq_revisit_bytes_saved')).toBeGreaterThanOrEqual(revisits.bytesSaved);
    } finally {
      workers.forEach((child) => child.kill('SIGTERM'));
    }
    await Promise.all(workers.map((child) => exited(child)));
    const requests = site.requests.filter((request) => request.page >= 0);
    const context = logs.join('\n').slice(-4_000);

    // Conditional requests: sent on revisits of pages with validators; 304s cost no body.
    const notModified = requests.filter((request) => request.status === 304);
    expect(notModified.length, context).toBeGreaterThan(0);
    for (const request of notModified) expect(request.bodyBytes).toBe(0);
    for (const page of site.pages.filter((candidate) => candidate.validator === 'none')) {
      expect(requests.filter((request) => request.page === page.index && request.conditional)).toEqual([]);
    }

    // Revisits happened: pages fetched more than once.
    const perPage = new Map<number, number[]>();
    for (const request of requests) perPage.set(request.page, [...(perPage.get(request.page) ?? []), request.at]);
    expect([...perPage.values()].filter((times) => times.length >= 2).length, context).toBeGreaterThan(site.pages.length / 2);

    // Nothing fetched twice inside its interval (server times; the schedule's 100 ms steps and 1 s early slack allowed).
    for (const [page, times] of perPage) {
      for (let i = 1; i < times.length; i += 1) expect((times[i] ?? 0) - (times[i - 1] ?? 0), `page ${page}`).toBeGreaterThanOrEqual(INTERVAL_MS - 1_200);
    }

    // Politeness at the server: at most RATE_PER_S request starts in any 1 s window (all paths).
    const starts = site.requests.map((request) => request.at).sort((a, b) => a - b);
    for (let i = RATE_PER_S; i < starts.length; i += 1) expect((starts[i] ?? 0) - (starts[i - RATE_PER_S] ?? 0)).toBeGreaterThanOrEqual(1_000 - 50);

    // Unchanged pages with validators cost at most 10% of their full bytes after the first fetch.
    const steady = site.pages.filter((page) => page.changes.length === 0 && page.validator !== 'none');
    const fullBytes = Math.max(...requests.filter((request) => request.status === 200).map((request) => request.bodyBytes));
    for (const page of steady) {
      const fetches = requests.filter((request) => request.page === page.index);
      const said = `page ${page.index}: ${fetches.map((request) => `+${request.at - disruptedUntil} ms ${request.status}${request.conditional ? ' conditional' : ''} ${request.bodyBytes} B`).join(', ')}`;
      // A fetch the kill -9 or the Redis restart may have lost (its validators never stored) is made
      // again from scratch, once: an unconditional fetch right after one that began before Redis was back.
      const again = fetches.slice(1).filter((request, i) => !request.conditional && (fetches[i]?.at ?? Infinity) <= disruptedUntil);
      expect(again.length, said).toBeLessThanOrEqual(1);
      const revisits = fetches.slice(1).filter((request) => !again.includes(request));
      const spent = revisits.reduce((sum, request) => sum + request.bodyBytes, 0);
      expect(spent, said).toBeLessThanOrEqual(0.1 * fullBytes * revisits.length);
    }

    // The schedule after the kill and the restart: every known URL due once, at a finite time.
    const client = redis.client();
    const store = new RevisitStore({ redis: client, namespace, buckets: revisitBuckets(10_000_000) });
    const audit = await store.audit();
    const counters = await store.counters();
    expect(audit.missing, JSON.stringify({ audit, counters })).toBe(0);
    expect(audit.duplicated, JSON.stringify({ audit, counters })).toBe(0);
    expect(counters.known).toBe(site.pages.length + 1);
    expect(audit.live).toBe(counters.known);
    expect(counters.notModified + counters.unchanged).toBeGreaterThan(0);
  }, 420_000);
});
