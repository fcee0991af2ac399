// Continuous crawling benchmarks.
// - `revisit-store`: Redis bytes per known URL (1M URLs) and Redis commands per revisit (a 304, a changed 200).
// - `revisit-freshness`: a 300-page site whose pages change at random (60% never, 30% every 30 s,
//   10% every 5 s on average; seeded), crawled continuously by 3 workers at 15 requests/s: time-averaged
//   freshness of --revisit adaptive, then of a fixed interval chosen to spend the same requests.
//   600 s per policy by default (about 32 minutes in all; CRAWLQ_BENCH_REVISIT_SECONDS to change):
//   adaptive starts knowing nothing of any page, and a continuous crawl runs for days, so the
//   figure that matters is past the learning. The first fifth (at most 60 s) is not counted.
// Alone: node --conditions=@crawlq/source --import tsx bench/run.ts revisit-store revisit-freshness
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureFreshness, startChangingSite, type FreshnessReport } from '@crawlq/demo-site';
import { revisitBuckets, RevisitStore, type RevisitRecord } from '@crawlq/frontier';
import { startTestRedis } from '@crawlq/testing';
import { urlFingerprint } from '@crawlq/urls';
import type { Redis } from 'ioredis';
import { exited, fmt, startCrawlq } from './support.js';

async function usedMemory(client: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
}

async function commandCalls(client: Redis): Promise<{ calls: number; evalsha: number }> {
  const text = await client.info('commandstats');
  let calls = 0;
  let evalsha = 0;
  for (const match of text.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) {
    if (match[1] === 'info') continue;
    calls += Number(match[2]);
    if (match[1] === 'evalsha' || match[1] === 'eval') evalsha += Number(match[2]);
  }
  return { calls, evalsha };
}

const urlAt = (i: number) => `https://host-${i % 1000}.example/section/${Math.floor(i / 1000)}/page-${i}.html`;

function recordOf(url: string, now: number, outcome: RevisitRecord['outcome']): RevisitRecord {
  return {
    url,
    now,
    intervalMs: 86_400_000 * (1 + (url.length % 7)),
    changed: outcome !== 'notModified',
    signature: '0123456789abcdef',
    lastModified: now - 3_600_000,
    etag: '"5f3a-1b2c3d4e"',
    misses: 0,
    depth: 3,
    retire: false,
    outcome,
    bytesSaved: outcome === 'notModified' ? 20_000 : 0,
    bodyBytes: 20_000,
    estimate: { changes: 1.7, unchangedMs: 5 * 86_400_000, changedMs: 2 * 86_400_000 },
    // A crawl's fetches count in their group's figures too (what the schedule passes).
    group: new URL(url).host,
  };
}

export async function benchRevisitStore(log: (line: string) => void, urls = 1_000_000): Promise<void> {
  const redis = await startTestRedis();
  const client = redis.client();
  try {
    const store = new RevisitStore({ redis: client, namespace: 'bench-revisit', buckets: revisitBuckets(urls) });
    const before = await usedMemory(client);
    const now = Date.now();
    let urlBytes = 0;
    const BATCH = 2_000;
    for (let start = 0; start < urls; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, urls - start) }, (_, j) => urlAt(start + j));
      for (const url of batch) urlBytes += Buffer.byteLength(url);
      await Promise.all(batch.map((url) => store.record(recordOf(url, now, 'first'))));
    }
    const bytes = (await usedMemory(client)) - before;
    log(`revisit-store: load average ${loadavg().map((load) => fmt(load, 1)).join(' ')} (memory figures do not depend on it)`);
    const count = urls.toLocaleString('en-US');
    log(`revisit-store: ${count} known URLs (ETag of 15 bytes and Last-Modified sent: the ETag kept; signature, times, change history): ${fmt(bytes / urls)} bytes/URL in Redis, of which the URL text is ${fmt(urlBytes / urls)}: ${fmt((bytes - urlBytes) / urls)} bytes/URL beyond the URL (${fmt(bytes / 1024 / 1024)} MiB; ${revisitBuckets(urls).toLocaleString('en-US')} state buckets)`);

    // Per revisit: the worker reads the state (1 script), records the outcome (1 script);
    // the releaser pops due URLs and pushes them to their backlogs (2 scripts per batch).
    const sample = 1_000;
    const due = Array.from({ length: sample }, (_, i) => urlAt(urls + i));
    await Promise.all(due.map((url) => store.record({ ...recordOf(url, now - 1_000, 'first'), intervalMs: 500 })));
    for (const outcome of ['notModified', 'changed'] as const) {
      if (outcome === 'changed') await Promise.all(due.map((url) => store.record({ ...recordOf(url, now - 1_000, 'first'), intervalMs: 500 })));
      const start = await commandCalls(client);
      let popped = 0;
      for (;;) {
        const { urls: batch } = await store.pop({ now: Date.now(), max: 500, leaseMs: 600_000 });
        if (batch.length === 0) break;
        popped += batch.length;
        await store.pushToBacklog('{bench-revisit}:cq:bk:', '{bench-revisit}:cq:bk:count', batch.map(({ url, depth }) => ({ group: new URL(url).host, depth, id: urlFingerprint(url), url })));
      }
      await Promise.all(due.map(async (url) => {
        await store.read(url);
        await store.record(recordOf(url, Date.now(), outcome));
      }));
      const end = await commandCalls(client);
      log(`revisit-store: a revisit answered ${outcome === 'notModified' ? '304' : '200 changed'}: ${fmt((end.evalsha - start.evalsha) / popped, 2)} script calls (round trips) and ${fmt((end.calls - start.calls) / popped, 2)} Redis commands per URL, scripts' own commands included (${popped} URLs; the backlog release and the BullMQ job a revisit then takes cost what a new URL's do)`);
    }
  } finally {
    await redis.stop();
  }
}

interface PolicyRun {
  readonly label: string;
  readonly report: FreshnessReport;
  readonly windowS: number;
}

export async function benchRevisitFreshness(log: (line: string) => void, options: { readonly seconds?: number; readonly pages?: number } = {}): Promise<void> {
  const seconds = options.seconds ?? Number(process.env.CRAWLQ_BENCH_REVISIT_SECONDS ?? 600);
  const pages = options.pages ?? 300;
  const warmS = Math.min(60, Math.round(seconds / 5));
  const run = async (label: string, revisit: string[]): Promise<PolicyRun> => {
    const redis = await startTestRedis();
    const site = await startChangingSite({ pages, seed: 42, horizonMs: (seconds + 120) * 1_000 });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-revisit-'));
    const env = { REDIS_URL: redis.url, CRAWLQ_NAMESPACE: 'bench-revisit' };
    const workers: ChildProcess[] = [];
    try {
      const defined = startCrawlq(['config', 'set', '--allow-private-network', '--rate', '15/1s', '--domain-concurrency', '8', '--revisit-ignore', '.clock', '--max-depth', '2', ...revisit], env);
      if ((await exited(defined)) !== 0) throw new Error(`config set failed for ${label}`);
      for (let i = 0; i < 3; i += 1) workers.push(startCrawlq(['worker', '--concurrency', '8', '--out', join(dir, `w${i}.jsonl`), '--log-level', 'warn'], env));
      const enqueue = startCrawlq(['enqueue', `${site.origin}/`], env);
      if ((await exited(enqueue)) !== 0) throw new Error('enqueue failed');
      const began = Date.now();
      await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
      const report = measureFreshness(site, { from: began + warmS * 1_000, to: began + seconds * 1_000 });
      return { label, report, windowS: seconds - warmS };
    } finally {
      workers.forEach((child) => child.kill('SIGTERM'));
      await Promise.all(workers.map((child) => exited(child)));
      await site.close();
      await redis.stop();
    }
  };
  const line = ({ label, report, windowS }: PolicyRun) =>
    `revisit-freshness: ${label}: freshness ${fmt(report.freshness * 100, 1)}%, staleness ${fmt(report.staleness * 100, 1)}%, ${report.requests} page requests (${fmt(report.requests / windowS, 2)}/s), ${report.notModified} answered 304, ${fmt(report.bodyBytes / 1024 / 1024, 2)} MiB of bodies`;
  const startedAt = Date.now();
  const loads: number[] = [];
  const sampler = setInterval(() => loads.push(loadavg()[0] ?? 0), 5_000);
  try {
    const adaptive = await run('adaptive 5s..10m', ['--revisit', 'adaptive', '--revisit-min', '5s', '--revisit-max', '10m']);
    log(line(adaptive));
    // The fixed interval that spends what adaptive spent: each page once per
    // interval, then corrected by what that run spent (queueing behind the
    // rate makes a fixed schedule's cycle longer than its interval). Two fixed
    // runs that bracket adaptive's requests are interpolated (staleness is
    // about linear in requests over a small range); otherwise the closer one is used.
    const fixedRuns: PolicyRun[] = [];
    let fixedS = Math.max(1, Math.round((pages * adaptive.windowS) / Math.max(1, adaptive.report.requests)));
    for (let round = 0; round < 3; round += 1) {
      const fixed = await run(`fixed ${fixedS}s`, ['--revisit', `${fixedS}s`]);
      log(line(fixed));
      fixedRuns.push(fixed);
      const below = fixedRuns.filter((candidate) => candidate.report.requests <= adaptive.report.requests);
      const above = fixedRuns.filter((candidate) => candidate.report.requests >= adaptive.report.requests);
      if (below.length > 0 && above.length > 0) break;
      const off = fixed.report.requests / Math.max(1, adaptive.report.requests);
      if (off >= 0.97 && off <= 1.03) break;
      const next = Math.max(1, Math.round(fixedS * off * (off > 1 ? 1.05 : 0.95)));
      fixedS = next === fixedS ? fixedS + (off > 1 ? 1 : -1) : next;
    }
    const target = adaptive.report.requests;
    const below = fixedRuns.filter((candidate) => candidate.report.requests <= target).sort((a, b) => b.report.requests - a.report.requests)[0];
    const above = fixedRuns.filter((candidate) => candidate.report.requests >= target).sort((a, b) => a.report.requests - b.report.requests)[0];
    let fixedStaleness: number;
    let how: string;
    if (below !== undefined && above !== undefined && above.report.requests > below.report.requests) {
      const share = (target - below.report.requests) / (above.report.requests - below.report.requests);
      fixedStaleness = below.report.staleness + share * (above.report.staleness - below.report.staleness);
      how = `interpolated between ${below.label} (${below.report.requests} requests) and ${above.label} (${above.report.requests})`;
    } else {
      const closest = [...fixedRuns].sort((a, b) => Math.abs(a.report.requests - target) - Math.abs(b.report.requests - target))[0] ?? adaptive;
      fixedStaleness = closest.report.staleness;
      how = `${closest.label}, ${fmt(closest.report.requests / Math.max(1, target), 2)}x adaptive's requests`;
    }
    const load = loads.length === 0 ? 0 : loads.reduce((sum, value) => sum + value, 0) / loads.length;
    log(
      `revisit-freshness: ${pages} pages, ${seconds} s per policy (measured over the last ${adaptive.windowS} s), 3 workers at 15 requests/s, ${fixedRuns.length + 1} runs in ${fmt((Date.now() - startedAt) / 60_000, 1)} min, 1-min load average ${fmt(load, 1)} (max ${fmt(Math.max(0, ...loads), 1)}): adaptive staleness ${fmt(adaptive.report.staleness * 100, 1)}% vs fixed ${fmt(fixedStaleness * 100, 1)}% at adaptive's ${target} requests (${how}) = ${fmt(adaptive.report.staleness / Math.max(1e-9, fixedStaleness), 2)}x (goal: <= 0.7x)`,
    );
  } finally {
    clearInterval(sampler);
  }
}
