// Rendering (`pnpm bench render`). The app fixture (a single-page app beside
// a chain of static pages) is crawled by one crawlq worker with --render
// always and with --render auto, and by Crawlee's PlaywrightCrawler
// (render-contender.ts, the same system Chromium), all at the same
// concurrency and no rate limit. A mixed site (the same app beside a larger
// static part shaped as a tree, as a site's navigation is) is crawled with
// always and auto: what auto saves where most pages need no browser.
// Prints pages/s, how many pages were rendered, and peak memory of each
// process tree with its browser (PSS, sampled from /proc).
// BENCH_SKIP_CRAWLEE=1 leaves Crawlee out.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { build } from 'esbuild';
import { proportionalBytes, treeMemoryBytes } from '@crawlq/renderer';
import { startTestRedis } from '@crawlq/testing';
import { exited, fmt, startCrawlq, startNode } from './support.js';

const APP_PAGES = 6;
const STATIC_PAGES = 40;
const MIXED_STATIC_PAGES = 200;
const MIXED_FAN_OUT = 4;

interface RenderRun {
  readonly mode: string;
  readonly seconds: number;
  readonly pages: number;
  readonly rendered: number;
  readonly peakTreeBytes: number;
  readonly peakBelowRootBytes: number;
  /** One worker with its browser: crawlq's worker process tree (the tree below the `crawl` parent), Crawlee's whole process tree. */
  readonly peakWorkerBytes: number;
  /** Crawlee: its own timing of the crawl (imports and start excluded). */
  readonly ownSeconds?: number;
}

const CONCURRENCY = 4;
const RENDER_TIMEOUT_MS = 15_000;
const CONTENDER = fileURLToPath(new URL('./render-contender.ts', import.meta.url));

/** Samples the peak memory (PSS) of a process tree until the process exits: the whole tree, and the tree without its root. */
async function sampleUntilExit(child: ChildProcess): Promise<{ code: number | null; peakTreeBytes: number; peakBelowRootBytes: number }> {
  let peakTreeBytes = 0;
  let peakBelowRootBytes = 0;
  const done = exited(child);
  let finished = false;
  void done.then(() => (finished = true));
  while (!finished) {
    const tree = treeMemoryBytes(child.pid ?? -1);
    peakTreeBytes = Math.max(peakTreeBytes, tree);
    peakBelowRootBytes = Math.max(peakBelowRootBytes, tree - (proportionalBytes(child.pid ?? -1) ?? 0));
    await sleep(200);
  }
  return { code: await done, peakTreeBytes, peakBelowRootBytes };
}

/**
 * Crawlee's PlaywrightCrawler on the same site (render-contender.ts), timed
 * from spawn to exit like crawlq. It runs as JavaScript compiled ahead, as
 * crawlq's worker does: through tsx its process tree also held tsx's loader
 * and esbuild's service (about 40 MB of the figure, none of it Crawlee's).
 */
async function crawleeRun(seeds: readonly string[]): Promise<RenderRun> {
  const storage = mkdtempSync(join(tmpdir(), 'crawlq-bench-crawlee-'));
  // Beside the bench, so that its imports resolve from the bench's dependencies.
  const compiled = fileURLToPath(new URL('./out/render-contender.mjs', import.meta.url));
  await build({ entryPoints: [CONTENDER], outfile: compiled, format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
  const started = performance.now();
  const child = startNode([compiled, String(CONCURRENCY), String(RENDER_TIMEOUT_MS), ...seeds], { CRAWLEE_STORAGE_DIR: storage });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const { code, peakTreeBytes, peakBelowRootBytes } = await sampleUntilExit(child);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`Crawlee exited with ${code}: ${stderr.slice(-2_000)}`);
  const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { pages: number; seconds: number };
  return { mode: 'crawlee', seconds, pages: result.pages, rendered: result.pages, peakTreeBytes, peakBelowRootBytes, peakWorkerBytes: peakTreeBytes, ownSeconds: result.seconds };
}

/** One crawlq crawl of `site` with `--render mode`, timed from spawn to exit. */
async function crawlqRun(site: SpaSite, mode: string, label: string, redisUrl: string): Promise<RenderRun> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-render-'));
  const out = join(dir, 'out.jsonl');
  const config = join(dir, 'crawlq.json');
  writeFileSync(config, JSON.stringify({ limitRules: [{ match: new URL(site.appOrigin).hostname, clickSelector: '#more', clickSteps: 1 }] }));
  const started = performance.now();
  const crawl = startCrawlq(
    ['crawl', ...site.seeds, '--render', mode, '--workers', '1', '--concurrency', String(CONCURRENCY), '--browser-pages', String(CONCURRENCY), '--render-timeout', `${RENDER_TIMEOUT_MS}ms`,
      '--rate', 'none', '--domain-concurrency', String(CONCURRENCY), '--allow-private-network', '--max-depth', '1000', '--namespace', `bench-render-${label}`, '--state-dir', dir, '--config', config, '--out', out, '--log-level', 'warn'],
    { REDIS_URL: redisUrl },
  );
  const { code, peakTreeBytes, peakBelowRootBytes } = await sampleUntilExit(crawl);
  if (code !== 0) throw new Error(`crawl --render ${mode} exited with ${code}`);
  const seconds = (performance.now() - started) / 1000;
  const records = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { render?: unknown });
  return { mode: label, seconds, pages: records.length, rendered: records.filter((record) => record.render !== undefined).length, peakTreeBytes, peakBelowRootBytes, peakWorkerBytes: peakBelowRootBytes };
}

export async function benchRender(log: (line: string) => void): Promise<RenderRun[]> {
  const startLoad = loadavg().map((load) => load.toFixed(1)).join(' ');
  const redis = await startTestRedis();
  // The app fixture: its static pages a chain, each found only once the one before it was read.
  const site = await startSpaSite({ appHost: '127.0.5.1', scriptHost: '127.0.5.2', staticHost: '127.0.5.3', appPages: APP_PAGES, staticPages: STATIC_PAGES, textBytes: 2_000 });
  // A mixed site: the same app beside a larger static part shaped like a site's navigation (a tree), what auto is for.
  const mixed = await startSpaSite({ appHost: '127.0.5.4', scriptHost: '127.0.5.5', staticHost: '127.0.5.6', appPages: APP_PAGES, staticPages: MIXED_STATIC_PAGES, staticFanOut: MIXED_FAN_OUT, textBytes: 2_000 });
  const runs: RenderRun[] = [];
  const withCrawlee = process.env.BENCH_SKIP_CRAWLEE !== '1';
  try {
    for (const mode of ['always', 'auto']) runs.push(await crawlqRun(site, mode, mode, redis.url));
    if (withCrawlee) runs.push(await crawleeRun(site.seeds));
    for (const mode of ['always', 'auto']) runs.push(await crawlqRun(mixed, mode, `mixed-${mode}`, redis.url));
  } finally {
    await site.close();
    await mixed.close();
    await redis.stop();
  }
  log(`load average ${startLoad} at the start`);
  log(`app fixture: ${APP_PAGES + 1} app pages beside ${STATIC_PAGES} static pages in a chain; mixed site (mixed-*): the same app beside ${MIXED_STATIC_PAGES} static pages in a tree (${MIXED_FAN_OUT} links each)`);
  log(`one worker (crawlq) or one process (Crawlee), concurrency ${CONCURRENCY}, ${CONCURRENCY} browser pages, no rate limit, render bound ${RENDER_TIMEOUT_MS / 1000} s; load average ${loadavg().map((load) => load.toFixed(1)).join(' ')} at the end`);
  log('wall time from spawn to exit; peak memory (PSS: proportional set size, shared pages split among the processes that share them, summed over the processes, sampled every 200 ms): the whole process tree / without its root process / per worker');
  log('per worker = one worker process with its browser processes: crawlq, the worker tree below the `crawl` parent; Crawlee, its one process and its browser');
  log('run           pages  rendered  seconds  pages/s  peak PSS tree  below root  per worker');
  const mb = (bytes: number) => `${fmt(bytes / 2 ** 20, 0)} MB`;
  for (const run of runs) {
    const own = run.ownSeconds === undefined ? '' : `  (crawl alone ${fmt(run.ownSeconds)} s)`;
    log(`${run.mode.padEnd(13)} ${String(run.pages).padStart(5)}  ${String(run.rendered).padStart(8)}  ${fmt(run.seconds).padStart(7)}  ${fmt(run.pages / run.seconds, 2).padStart(7)}  ${mb(run.peakTreeBytes).padStart(13)}  ${mb(run.peakBelowRootBytes).padStart(10)}  ${mb(run.peakWorkerBytes).padStart(10)}${own}`);
  }
  const rate = (run: RenderRun | undefined) => (run ? run.pages / run.seconds : Number.NaN);
  const byMode = (mode: string) => runs.find((run) => run.mode === mode);
  const [always, auto, crawlee] = [byMode('always'), byMode('auto'), byMode('crawlee')];
  if (always && auto) log(`app fixture, auto / always: ${fmt(rate(auto) / rate(always), 2)}x pages/s`);
  const [mixedAlways, mixedAuto] = [byMode('mixed-always'), byMode('mixed-auto')];
  if (mixedAlways && mixedAuto) log(`mixed site, auto / always: ${fmt(rate(mixedAuto) / rate(mixedAlways), 2)}x pages/s`);
  if (always && crawlee) log(`crawlq always / Crawlee: ${fmt(rate(always) / rate(crawlee), 2)}x pages/s, ${fmt(always.peakWorkerBytes / crawlee.peakWorkerBytes, 2)}x peak PSS per worker, ${fmt(always.peakTreeBytes / crawlee.peakTreeBytes, 2)}x peak PSS (tree)`);
  if (auto && crawlee) log(`crawlq auto / Crawlee: ${fmt(rate(auto) / rate(crawlee), 2)}x pages/s, ${fmt(auto.peakWorkerBytes / crawlee.peakWorkerBytes, 2)}x peak PSS per worker, ${fmt(auto.peakTreeBytes / crawlee.peakTreeBytes, 2)}x peak PSS (tree)`);
  if (!withCrawlee) log('Crawlee: skipped (BENCH_SKIP_CRAWLEE=1)');
  return runs;
}
