// What the crawler API costs: one run, the 10-host scale site, `crawlq crawl`
// with the built-in page record crawler and with a --crawler module doing the
// same work (parse, follow every link, one item per page), same flags. Both
// run through the same page handler (the built-in crawler is a defineCrawler
// crawler too): what differs is the user's module (compiled once into
// node_modules/.cache/crawlq, then imported by every process), the route's
// own code, and the request meta a user's crawler may carry (read once per job).
// Each run also prints its CPU (the command and its workers) per 1,000 pages,
// which a busy machine bends less than the rate, and when its first page was
// counted (the progress line's resolution: about half a second).
// Runs in the order built-in, --crawler, --crawler, built-in, so that a load
// that rises or falls during the run weighs on both alike (the machine is
// shared). Prints pages/s of each run and the ratio of the sums (the API's
// goal: at least 0.95).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REDIS_SERVER_SETTINGS } from '@crawlq/redis';
import { startTestRedis } from '@crawlq/testing';
import { childCpuSeconds, collect, CONCURRENCY, CRAWL_FLAGS, spawnCrawlq, startSite } from './scale.js';
import { fmt } from './support.js';

const CRAWLER = fileURLToPath(new URL('./fixtures/all-links-crawler.ts', import.meta.url));

interface Run {
  readonly pages: number;
  readonly seconds: number;
  /** Steady state from the progress lines, when there were two. */
  readonly steady: number | undefined;
  /** user + sys CPU of the command and its workers. */
  readonly cpuSeconds: number;
  /** Seconds from the workers' launch (the progress line's clock) to its first progress line counting a page. */
  readonly firstPageSeconds: number | undefined;
}

async function crawl(redisUrl: string, seeds: readonly string[], extra: readonly string[]): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-handler-'));
  try {
    const started = performance.now();
    const child = spawnCrawlq(['crawl', ...seeds, '--redis-url', redisUrl, '--namespace', 'bench-handler', '--fresh', '--json', '--concurrency', String(CONCURRENCY), '--out', join(dir, 'out.jsonl'), '--state-dir', dir, ...CRAWL_FLAGS, ...extra]);
    const { stdout, stderr, code } = await collect(child);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`crawlq crawl exited with ${code}: ${stderr}`);
    const summary = JSON.parse(stdout) as { pages?: number };
    const points = [...stderr.matchAll(/\[(\d+(?:\.\d+)?)s\] pages (\d+) /g)].map(([, s, p]) => ({ seconds: Number(s), pages: Number(p) })).filter((point) => point.pages > 0);
    const [first, last] = [points[0], points.at(-1)];
    const steady = first && last && last.seconds > first.seconds ? (last.pages - first.pages) / (last.seconds - first.seconds) : undefined;
    return { pages: summary.pages ?? Number.NaN, seconds, steady, cpuSeconds: childCpuSeconds(stderr), firstPageSeconds: first?.seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchHandlerApi(log: (line: string) => void): Promise<{ ratio: number }> {
  const redis = await startTestRedis();
  const client = redis.client();
  for (const [name, value] of Object.entries(REDIS_SERVER_SETTINGS)) await client.config('SET', name, value);
  client.disconnect();
  const site = await startSite();
  try {
    const runs: { name: 'built-in' | 'crawler'; run: Run }[] = [];
    for (const name of ['built-in', 'crawler', 'crawler', 'built-in'] as const) {
      const run = await crawl(redis.url, site.seeds, name === 'crawler' ? ['--crawler', CRAWLER] : []);
      runs.push({ name, run });
      log(
        `${name === 'crawler' ? '--crawler (routes):  ' : 'built-in page record:'} ${run.pages} pages in ${fmt(run.seconds, 1)} s = ${fmt(run.pages / run.seconds, 0)} pages/s (steady ${run.steady === undefined ? 'n/a' : fmt(run.steady, 0)}), ` +
          `first page counted at ${run.firstPageSeconds === undefined ? 'n/a' : `${fmt(run.firstPageSeconds, 1)} s`}, CPU ${fmt((run.cpuSeconds / run.pages) * 1000, 2)} s per 1,000 pages, load average ${fmt(loadavg()[0] ?? 0, 1)}`,
      );
    }
    const total = (name: 'built-in' | 'crawler') => {
      const own = runs.filter((entry) => entry.name === name).map((entry) => entry.run);
      const steady = own.map((run) => run.steady);
      return {
        rate: own.reduce((sum, run) => sum + run.pages, 0) / own.reduce((sum, run) => sum + run.seconds, 0),
        steady: steady.every((value) => value !== undefined) ? steady.reduce((sum, value) => sum + value, 0) / steady.length : undefined,
      };
    };
    const builtIn = total('built-in');
    const handler = total('crawler');
    const ratio = handler.rate / builtIn.rate;
    log(`ratio --crawler / built-in, whole command (pages over seconds of both runs each): ${fmt(ratio, 3)} (goal >= 0.95)`);
    if (handler.steady !== undefined && builtIn.steady !== undefined) log(`ratio, steady state (mean of both runs each): ${fmt(handler.steady / builtIn.steady, 3)}`);
    const cpu = (name: 'built-in' | 'crawler') => runs.filter((entry) => entry.name === name).reduce((sum, entry) => sum + entry.run.cpuSeconds, 0);
    log(`CPU per page, --crawler / built-in (both runs each): ${fmt(cpu('crawler') / cpu('built-in'), 3)}`);
    return { ratio };
  } finally {
    await site.close();
    await redis.stop();
  }
}
