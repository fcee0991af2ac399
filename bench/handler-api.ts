// What the crawler API costs: one run, the 10-host scale site, `crawlq crawl`
// with the built-in page record and with a --crawler module doing the same
// work (parse, follow every link, one item per page), same flags. Prints
// pages/s of both and their ratio (the API's goal: at least 0.95).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REDIS_SERVER_SETTINGS } from '@crawlq/redis';
import { startTestRedis } from '@crawlq/testing';
import { collect, CONCURRENCY, CRAWL_FLAGS, spawnCrawlq, startSite } from './scale.js';
import { fmt } from './support.js';

const CRAWLER = fileURLToPath(new URL('./fixtures/all-links-crawler.ts', import.meta.url));

interface Run {
  readonly pages: number;
  readonly seconds: number;
  /** Steady state from the progress lines, when there were two. */
  readonly steady: number | undefined;
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
    return { pages: summary.pages ?? Number.NaN, seconds, steady };
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
    const builtIn = await crawl(redis.url, site.seeds, []);
    const handler = await crawl(redis.url, site.seeds, ['--crawler', CRAWLER]);
    const rate = (run: Run) => run.pages / run.seconds;
    log(`built-in page record: ${builtIn.pages} pages in ${fmt(builtIn.seconds, 1)} s = ${fmt(rate(builtIn), 0)} pages/s (steady ${builtIn.steady === undefined ? 'n/a' : fmt(builtIn.steady, 0)})`);
    log(`--crawler (routes):   ${handler.pages} pages in ${fmt(handler.seconds, 1)} s = ${fmt(rate(handler), 0)} pages/s (steady ${handler.steady === undefined ? 'n/a' : fmt(handler.steady, 0)})`);
    const ratio = rate(handler) / rate(builtIn);
    log(`ratio --crawler / built-in, whole command: ${fmt(ratio, 3)} (goal >= 0.95)`);
    if (handler.steady !== undefined && builtIn.steady !== undefined) log(`ratio, steady state: ${fmt(handler.steady / builtIn.steady, 3)}`);
    return { ratio };
  } finally {
    await site.close();
    await redis.stop();
  }
}
