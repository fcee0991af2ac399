// Foundation benchmark: crawlq (one worker process, politeness out of the way)
// against a bare in-process got + cheerio loop over the same loopback site.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawlq/config';
import { openCrawlServices } from '@crawlq/crawl-control';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis } from '@crawlq/testing';
import { fileURLToPath } from 'node:url';
import { bareLoop } from './bare-loop.js';
import { exited, fmt, startCrawlq, untilCrawlDone, startScript, waitForLine } from './support.js';

const HOSTS = Array.from({ length: 10 }, (_, i) => `127.0.1.${i + 1}`);
const PAGES_PER_HOST = 200;
/** Jobs in flight: each side runs at both and keeps its better figure. */
const CONCURRENCIES = [16, 64];

export interface CrawlThroughput {
  readonly pages: number;
  readonly ceilingPagesPerSecond: number;
  readonly crawlqPagesPerSecond: number;
  readonly ratio: number;
  /** crawlq with the gate against crawlq with a gate that admits everything locally. */
  readonly gateRatio: number;
}

const GATE_OFF_WORKER = fileURLToPath(new URL('./gate-off-worker.ts', import.meta.url));

/**
 * crawlq: one worker process already running, seeds enqueued, timed until the
 * queue is drained. `gate: 'off'` runs the same worker with a group gate that
 * admits everything without Redis (gate-off-worker.ts): what the gate costs.
 */
async function crawlqRun(
  site: DemoSite,
  concurrency: number,
  gate: 'on' | 'off',
): Promise<{ pages: number; seconds: number; commandsPerPage: number; top: string }> {
  const redis = await startTestRedis();
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-'));
  const out = join(dir, 'out.jsonl');
  const flags = ['--namespace', 'bench', '--allow-private-network', '--scope', 'any', '--max-depth', '1000', '--rate', 'none', '--domain-concurrency', '10000'];
  const worker =
    gate === 'on'
      ? startCrawlq(['worker', ...flags, '--concurrency', String(concurrency), '--out', out], { REDIS_URL: redis.url })
      : startScript(GATE_OFF_WORKER, [String(concurrency), out], { REDIS_URL: redis.url });
  try {
    await waitForLine(worker, /started/);
    const config = loadConfig({ flags: { namespace: 'bench', allowPrivateNetwork: true, scope: 'any', maxDepth: 1000, rate: 'none', domainConcurrency: 10_000 } });
    const services = await openCrawlServices(config, redis.url, { role: 'producer' });
    const stats = redis.client();
    await stats.config('RESETSTAT');
    const started = performance.now();
    await services.frontier.addSeeds(site.seeds);
    await untilCrawlDone(services, 'bench');
    const seconds = (performance.now() - started) / 1000;
    const commandStats = await stats.info('commandstats');
    await services.close();
    // The results file, not the progress counters (those are flushed every 250 ms).
    const pages = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '').length;
    const perCommand = [...commandStats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map(([, name, calls]) => [name ?? '', Number(calls)] as const);
    const total = perCommand.reduce((sum, [, calls]) => sum + calls, 0);
    const top = [...perCommand].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, calls]) => `${name} ${(calls / pages).toFixed(2)}`).join(', ');
    return { pages, seconds, commandsPerPage: total / pages, top };
  } finally {
    worker.kill('SIGTERM');
    await exited(worker);
    await redis.stop();
  }
}

export async function benchCrawlThroughput(log: (line: string) => void): Promise<CrawlThroughput> {
  const site = await startDemoSite({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, linksPerPage: 5, crossHostLinksPerPage: 1, pageBytes: 2000 });
  try {
    const total = site.reachable({ seeds: site.seeds, maxDepth: 10_000, scope: 'any' }).size;
    log(`site: ${HOSTS.length} hosts, ${total} pages reachable; politeness out of the way (--rate none)`);
    await bareLoop(site.seeds, 16); // warm-up: JIT, sockets
    let ceilingRate = 0;
    let crawlqRate = 0;
    let gateOffRate = 0;
    let pages = 0;
    // Interleaved, so every side sees the same background load.
    for (const concurrency of CONCURRENCIES) {
      const ceiling = await bareLoop(site.seeds, concurrency);
      const crawlq = await crawlqRun(site, concurrency, 'on');
      const gateOff = await crawlqRun(site, concurrency, 'off');
      const rates = [ceiling.pages / ceiling.seconds, crawlq.pages / crawlq.seconds, gateOff.pages / gateOff.seconds] as const;
      log(`concurrency ${concurrency}: ceiling (in-process got + cheerio) ${ceiling.pages} pages in ${fmt(ceiling.seconds, 2)} s = ${fmt(rates[0])} pages/s; crawlq (1 worker process) ${crawlq.pages} pages in ${fmt(crawlq.seconds, 2)} s = ${fmt(rates[1])} pages/s`);
      log(`concurrency ${concurrency}: crawlq Redis commands per page ${fmt(crawlq.commandsPerPage, 1)} (most: ${crawlq.top})`);
      log(`concurrency ${concurrency}: crawlq with the gate bypassed ${gateOff.pages} pages in ${fmt(gateOff.seconds, 2)} s = ${fmt(rates[2])} pages/s (${fmt(gateOff.commandsPerPage, 1)} Redis commands per page)`);
      ceilingRate = Math.max(ceilingRate, rates[0]);
      crawlqRate = Math.max(crawlqRate, rates[1]);
      gateOffRate = Math.max(gateOffRate, rates[2]);
      pages = crawlq.pages;
    }
    log(`best of each: ceiling ${fmt(ceilingRate)} pages/s, crawlq ${fmt(crawlqRate)} pages/s, ratio ${fmt(crawlqRate / ceilingRate, 2)} (goal >= 0.70)`);
    log(`group gate with its limits out of the way: crawlq ${fmt(crawlqRate)} pages/s against ${fmt(gateOffRate)} pages/s with the gate bypassed, ratio ${fmt(crawlqRate / gateOffRate, 2)} (goal >= 0.90)`);
    return { pages, ceilingPagesPerSecond: ceilingRate, crawlqPagesPerSecond: crawlqRate, ratio: crawlqRate / ceilingRate, gateRatio: crawlqRate / gateOffRate };
  } finally {
    await site.close();
  }
}
