import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChangingSite, type ChangingSite } from '@crawlq/demo-site';
import { readRevisitGroups, readRevisitProgress, readShardNamespaces } from '@crawlq/frontier';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';

// Per-group revisit figures, judged by the servers: two changing sites on two
// loopback addresses (two politeness groups) crawled continuously by 3 worker
// processes; once the workers have stopped, each group's counters must be
// what its server answered (a 200 with a version the server had not sent
// that page before is a changed revisit, a 304 a not-modified one), as read
// from Redis, by `group list --revisits` and by the dashboard; and the groups'
// figures, due counts included, must add up to the fleet's.

const INTERVAL_S = 3;
const RUN_MS = 20_000;

let redis: TestRedis;
let sites: ChangingSite[];

beforeAll(async () => {
  redis = await startTestRedis();
  sites = await Promise.all([
    startChangingSite({ pages: 12, seed: 3, host: '127.0.0.1', classes: [{ share: 0.5, meanMs: 4_000 }, { share: 0.5, meanMs: undefined }] }),
    startChangingSite({ pages: 8, seed: 4, host: '127.0.0.2', classes: [{ share: 0.6, meanMs: 3_000 }, { share: 0.4, meanMs: undefined }] }),
  ]);
});
afterAll(async () => {
  await Promise.all(sites.map((site) => site.close()));
  await redis.stop();
});

/** What one site's server answered, as a continuous crawl counts it: per path, the first answer, then changed, unchanged or 304 by the version served. */
function served(site: ChangingSite) {
  const figures = { known: 0, first: 0, changed: 0, unchanged: 0, notModified: 0 };
  const last = new Map<string, number>();
  for (const request of site.requests) {
    if (request.path === '/robots.txt') continue;
    const before = last.get(request.path);
    last.set(request.path, request.version);
    if (before === undefined) figures.first += 1;
    else if (request.status === 304) figures.notModified += 1;
    else if (request.version !== before) figures.changed += 1;
    else figures.unchanged += 1;
  }
  figures.known = last.size;
  return figures;
}

describe('per-group revisit figures', () => {
  it("count each group's known URLs, changed and unchanged revisits, 304s and bytes saved as its server answered them, and its due URLs", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-revisit-groups-'));
    const namespace = 'revisit-groups';
    const env = cliEnv(redis.url);
    const defined = await runCli(['config', 'set', '--namespace', namespace, '--allow-private-network', '--rate', '10/1s', '--domain-concurrency', '2', '--revisit', `${INTERVAL_S}s`, '--revisit-ignore', '.clock'], { env });
    expect(defined.code, defined.stderr).toBe(0);
    const logs: string[] = [];
    const workers: ChildProcess[] = [0, 1, 2].map((i) => {
      const child = startCli(['worker', '--namespace', namespace, '--concurrency', '4', '--out', join(dir, `worker-${i}.jsonl`)], { env });
      const at = logs.push('') - 1;
      child.stderr?.on('data', (chunk: Buffer) => (logs[at] += chunk.toString()));
      return child;
    });
    try {
      await waitFor(() => (logs.every((log) => /started \(concurrency/.test(log)) ? true : undefined), { timeoutMs: 120_000, what: 'every worker to start' });
      const enqueued = await runCli(['enqueue', ...sites.map((site) => `${site.origin}/`), '--namespace', namespace], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, RUN_MS));
      // Every page of both sites fetched, and most of them more than once.
      await waitFor(() => (sites.every((site) => served(site).known === site.pages.length + 1 && served(site).notModified > 0) ? true : undefined), { timeoutMs: 120_000, what: 'every page fetched and a 304 on each site' });
    } finally {
      workers.forEach((child) => child.kill('SIGTERM'));
      await Promise.all(workers.map((child) => exited(child)));
    }
    const context = logs.join('\n').slice(-3_000);

    const client = redis.client();
    const shards = await readShardNamespaces(client, namespace);
    // The crawl groups by host (the default): a loopback address and its port.
    const groupOf = (url: string) => new URL(url).host;
    const now = Date.now();
    const read = await readRevisitGroups(client, shards, { now, groupOf });
    expect(read.dueComplete).toBe(true);
    expect(read.groups.map((figures) => figures.group).sort()).toEqual(sites.map((site) => groupOf(site.origin)).sort());
    for (const site of sites) {
      const figures = read.groups.find((candidate) => candidate.group === groupOf(site.origin));
      const truth = served(site);
      expect(figures, context).toMatchObject({ ...truth, gone: 0, retired: 0 });
      expect(truth.changed, site.origin).toBeGreaterThan(0);
      // Each 304 saved the page's last full body, kept within 5% (pages are about 4 KiB here).
      const full = Math.max(...site.requests.filter((request) => request.status === 200 && request.path !== '/').map((request) => request.bodyBytes));
      expect(figures?.bytesSaved ?? 0).toBeGreaterThanOrEqual(truth.notModified * full * 0.9);
      expect(figures?.bytesSaved ?? 0).toBeLessThanOrEqual(truth.notModified * full * 1.1);
      // Every known URL has a schedule entry within the hour (3 s intervals, 10 min leases).
      expect(figures?.dueNextHour ?? 0).toBeGreaterThanOrEqual(truth.known);
    }
    // `group list --revisits` shows the same figures (due counts read again: time has passed).
    const listed = await runCli(['group', 'list', '--revisits', '--json', '--namespace', namespace], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const cli = JSON.parse(listed.stdout) as { groups: { group: string; dueNextHour: number }[]; dueComplete: boolean };
    expect(cli.dueComplete).toBe(true);
    for (const figures of read.groups) expect(cli.groups.find((candidate) => candidate.group === figures.group)).toMatchObject({ ...figures, dueNow: expect.any(Number), dueNextHour: expect.any(Number) });
    const text = await runCli(['group', 'list', '--revisits', '--namespace', namespace], { env });
    expect(text.stdout).toMatch(/^group\s+known\s+due now\s+due 1h\s+changed\s+unchanged\s+304\s+gone\s+bytes saved$/m);
    for (const site of sites) expect(text.stdout).toMatch(new RegExp(`^${groupOf(site.origin).replace(/\./g, '\\.')}\\s+${served(site).known}\\s`, 'm'));
    // The dashboard's overview shows them too: in its API and in the page's table.
    const dashboard = startCli(['dashboard', '--port', '0', '--namespace', namespace], { env });
    try {
      let output = '';
      dashboard.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      dashboard.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const url = await waitFor(() => /dashboard: (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1], { timeoutMs: 60_000, what: 'the dashboard URL' });
      const api = (await (await fetch(`${url}/api/overview`)).json()) as { revisitGroups: { groups: { group: string }[]; dueComplete: boolean } };
      expect(api.revisitGroups.dueComplete).toBe(true);
      for (const figures of read.groups) expect(api.revisitGroups.groups.find((candidate) => candidate.group === figures.group)).toMatchObject({ ...figures, dueNow: expect.any(Number), dueNextHour: expect.any(Number) });
      const page = await (await fetch(`${url}/overview`)).text();
      expect(page).toContain('Revisits by group');
      for (const site of sites) {
        const row = new RegExp(`<tr data-revisit-group="${groupOf(site.origin)}">[\\s\\S]*?data-testid="revisit-group-known">(\\d+)<[\\s\\S]*?data-testid="revisit-group-changed">(\\d+)<`).exec(page);
        expect(row?.slice(1), site.origin).toEqual([String(served(site).known), String(served(site).changed)]);
      }
    } finally {
      dashboard.kill('SIGINT');
      await exited(dashboard);
    }
    // The groups add up to the fleet's figures.
    const fleet = await readRevisitProgress(client, shards, now);
    for (const field of ['known', 'changed', 'unchanged', 'notModified', 'bytesSaved', 'dueNow', 'dueNextHour'] as const) {
      expect(read.groups.reduce((sum, figures) => sum + (figures[field] ?? 0), 0), field).toBe(fleet[field]);
    }
  }, 300_000);
});
