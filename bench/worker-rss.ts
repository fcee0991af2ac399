// The aim: "a 100,000-page crawl keeps worker RSS flat (within 10% between 20k
// and 100k pages)". One `crawlq worker` process (the bundled worker users run)
// crawls a 100,000-page loopback site with politeness out of the way; its
// resident set is read from /proc every second beside the pages in its results
// file, and its V8 heap (from its own /metrics) at each fifth of the crawl, so a
// growth shows whether JavaScript objects or memory outside the heap grow.
// CRAWLQ_BENCH_RSS_SAMPLES=FILE also writes every sample (seconds, pages, RSS bytes).
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startTestRedis } from '@crawlq/testing';
import { WORKER_BUNDLE } from '../apps/cli/build-freshness.mjs';
import { startSiteProcess } from './site-server.js';
import { cpuSeconds, currentRss, exited, fmt, peakRss, REPO_ROOT, startCrawlq, startNode, waitForLine } from './support.js';

const HOSTS = Array.from({ length: 20 }, (_, i) => `127.0.4.${i + 1}`);
/** 20 x 5,000 = 100,000 pages; CRAWLQ_BENCH_RSS_PAGES_PER_HOST shrinks the site for a quick try. */
const PAGES_PER_HOST = Number(process.env.CRAWLQ_BENCH_RSS_PAGES_PER_HOST ?? 5_000);
const CONCURRENCY = 64;
/** RSS is reported when the crawl passes each fifth of the site (20k, 40k, ... of 100k). */
const MILESTONE_SHARES = [0.2, 0.4, 0.6, 0.8, 1] as const;
/** A crawl whose results file stops growing this long is over (or stuck): the bench reports what it has. */
const STALL_MS = 120_000;
/** Politeness out of the way, every link followed, as bench scale runs crawlq. */
const CRAWL_FLAGS = ['--allow-private-network', '--scope', 'any', '--max-depth', '1000', '--rate', 'none', '--domain-concurrency', '10000', '--ignore-robots'];

/** Counts the lines of a file that only grows, reading only what was appended since the last call. */
class AppendedLineCounter {
  #fd: number | undefined;
  #lines = 0;
  readonly #buffer = Buffer.allocUnsafe(1 << 20);

  constructor(private readonly path: string) {}

  count(): number {
    if (this.#fd === undefined) {
      if (!existsSync(this.path)) return 0;
      this.#fd = openSync(this.path, 'r');
    }
    for (;;) {
      // No position: the file offset advances with each read.
      const read = readSync(this.#fd, this.#buffer, 0, this.#buffer.length, null);
      if (read === 0) return this.#lines;
      for (let i = 0; i < read; i += 1) if (this.#buffer[i] === 10) this.#lines += 1;
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
  }
}

interface Milestone {
  readonly target: number;
  readonly pages: number;
  readonly seconds: number;
  readonly rss: number;
  readonly heapUsed: number | undefined;
}

/** The worker's V8 heap in use, from its /metrics (undefined when the scrape fails). */
async function heapUsed(metricsPort: number): Promise<number | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const match = /^crawlq_process_heap_used_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

const megabytes = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${fmt(bytes / 2 ** 20, 1)} MB`);

export async function benchWorkerRss(log: (line: string) => void): Promise<{ ratio: number }> {
  const total = HOSTS.length * PAGES_PER_HOST;
  const milestones = MILESTONE_SHARES.map((share) => Math.round(total * share));
  const site = await startSiteProcess({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, linksPerPage: 5, crossHostLinksPerPage: 1, pageBytes: 2000 });
  const redis = await startTestRedis();
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-rss-'));
  const out = join(dir, 'out.jsonl');
  const counter = new AppendedLineCounter(out);
  const metricsPort = await freePort();
  const env = { REDIS_URL: redis.url };
  const namespaceFlags = ['--namespace', 'bench-rss'];
  // `pnpm crawlq worker` runs the bundle when the build has one, as `crawl`'s workers do.
  const entry = existsSync(WORKER_BUNDLE) ? WORKER_BUNDLE : undefined;
  const workerArgs = ['worker', ...namespaceFlags, ...CRAWL_FLAGS, '--concurrency', String(CONCURRENCY), '--out', out, '--metrics-port', String(metricsPort)];
  const worker = entry ? startNode([entry, ...workerArgs], env) : startCrawlq(workerArgs, env);
  let workerLog = '';
  worker.stderr?.on('data', (chunk: Buffer) => (workerLog = (workerLog + chunk.toString()).slice(-20_000)));
  worker.stdout?.resume();
  try {
    log(`site: ${HOSTS.length} loopback hosts x ${fmt(PAGES_PER_HOST, 0)} pages (${fmt(total, 0)}) of 2 KB, 6 links each, in a process of its own`);
    log(`one \`crawlq worker\` (${entry ? entry.slice(REPO_ROOT.length) : 'dist/main.js worker'}), concurrency ${CONCURRENCY}, ${CRAWL_FLAGS.join(' ')}; RSS from /proc/PID/status VmRSS every second, pages from its results file`);
    await waitForLine(worker, /started/, 120_000);
    const pid = worker.pid;
    if (pid === undefined) throw new Error('the worker has no pid');
    const rssAtStart = currentRss(pid);
    const enqueue = startCrawlq(['enqueue', ...namespaceFlags, ...CRAWL_FLAGS, ...(await site.urls(HOSTS.map((host) => [host, 0])))], env);
    let enqueueLog = '';
    enqueue.stderr?.on('data', (chunk: Buffer) => (enqueueLog += chunk.toString()));
    enqueue.stdout?.resume();
    const started = performance.now();
    if ((await exited(enqueue)) !== 0) throw new Error(`crawlq enqueue failed:\n${enqueueLog}`);

    const samples: { seconds: number; pages: number; rss: number }[] = [];
    const reached: Milestone[] = [];
    let lastGrowth = performance.now();
    let pages = 0;
    let cpu: number | undefined;
    let peak: number | undefined;
    while (pages < total) {
      await sleep(1000);
      if (worker.exitCode !== null || worker.signalCode !== null) throw new Error(`the worker exited early:\n${workerLog}`);
      const rss = currentRss(pid);
      const now = counter.count();
      const seconds = (performance.now() - started) / 1000;
      if (now > pages) lastGrowth = performance.now();
      pages = now;
      if (rss !== undefined) samples.push({ seconds, pages, rss });
      for (const target of milestones) {
        if (pages < target || reached.some((milestone) => milestone.target === target) || rss === undefined) continue;
        reached.push({ target, pages, seconds, rss, heapUsed: await heapUsed(metricsPort) });
      }
      // Read while the worker still runs: CPU and peak of the crawl, not of its shutdown.
      cpu = cpuSeconds(pid) ?? cpu;
      peak = peakRss(pid) ?? peak;
      if (performance.now() - lastGrowth > STALL_MS) {
        log(`the results file stopped growing at ${fmt(pages, 0)} of ${fmt(total, 0)} pages for ${STALL_MS / 1000} s; figures up to there`);
        break;
      }
    }

    log('| pages done | worker RSS | V8 heap used | seconds since enqueue |');
    log('|---|---|---|---|');
    log(`| 0 (worker started, idle) | ${megabytes(rssAtStart)} | | |`);
    for (const milestone of reached) log(`| ${fmt(milestone.target, 0)} (sample at ${fmt(milestone.pages, 0)}) | ${megabytes(milestone.rss)} | ${megabytes(milestone.heapUsed)} | ${fmt(milestone.seconds, 0)} |`);
    const first = reached[0];
    const last = reached.at(-1);
    const ratio = first && last && last !== first ? last.rss / first.rss : Number.NaN;
    log(`RSS(${fmt(last?.target ?? 0, 0)}) / RSS(${fmt(first?.target ?? 0, 0)}): ${fmt(ratio, 3)} (goal <= 1.10)`);
    const highest = samples.reduce<(typeof samples)[number] | undefined>((best, sample) => (best === undefined || sample.rss > best.rss ? sample : best), undefined);
    log(`peak RSS: ${megabytes(peak)} (VmHWM); highest 1 s sample ${megabytes(highest?.rss)} at ${fmt(highest?.pages ?? 0, 0)} pages`);
    const lastSample = samples.at(-1);
    if (lastSample) {
      const steady = first && last && last.seconds > first.seconds ? (last.pages - first.pages) / (last.seconds - first.seconds) : Number.NaN;
      log(`pages/s: ${fmt(lastSample.pages / lastSample.seconds, 0)} over the whole crawl (${fmt(lastSample.pages, 0)} pages in ${fmt(lastSample.seconds, 0)} s from enqueue); ${fmt(steady, 0)} from ${fmt(first?.pages ?? 0, 0)} to ${fmt(last?.pages ?? 0, 0)} pages`);
    }
    log(`worker CPU (user+sys, start-up included): ${fmt(cpu ?? Number.NaN, 1)} s = ${fmt(((cpu ?? Number.NaN) / Math.max(pages, 1)) * 1e6, 0)} us per page`);
    if (process.env.CRAWLQ_BENCH_RSS_SAMPLES) writeFileSync(process.env.CRAWLQ_BENCH_RSS_SAMPLES, samples.map((s) => `${s.seconds.toFixed(1)}\t${s.pages}\t${s.rss}`).join('\n'));
    return { ratio };
  } finally {
    worker.kill('SIGTERM');
    await exited(worker);
    counter.close();
    await redis.stop();
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
