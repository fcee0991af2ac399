// Rendering (`pnpm bench render`): one mixed site (a single-page app beside a
// larger static site), crawled by one worker with --render always and with
// --render auto, at the same concurrency and no rate limit. Prints pages/s,
// how many pages were rendered, and the worker's peak resident memory with
// its browser's processes (sampled from /proc).
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSpaSite } from '@crawlq/demo-site';
import { startTestRedis } from '@crawlq/testing';
import { exited, fmt, startCrawlq } from './support.js';

const APP_PAGES = 6;
const STATIC_PAGES = 40;

interface RenderRun {
  readonly mode: string;
  readonly seconds: number;
  readonly pages: number;
  readonly rendered: number;
  readonly peakTreeBytes: number;
}

/** Resident bytes of `root` and every descendant (the crawl, its worker, the worker's browser). */
function treeRss(root: number): number {
  const entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ pid: Number(name), ppid: Number(fields[1]), rss: Number(fields[21]) * 4096 }];
    } catch {
      return [];
    }
  });
  const inTree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of entries) if (!inTree.has(entry.pid) && inTree.has(entry.ppid)) grew = inTree.add(entry.pid) !== undefined;
  }
  return entries.filter((entry) => inTree.has(entry.pid)).reduce((sum, entry) => sum + entry.rss, 0);
}

export async function benchRender(log: (line: string) => void): Promise<RenderRun[]> {
  const redis = await startTestRedis();
  const site = await startSpaSite({ appHost: '127.0.5.1', scriptHost: '127.0.5.2', staticHost: '127.0.5.3', appPages: APP_PAGES, staticPages: STATIC_PAGES, textBytes: 2_000 });
  const runs: RenderRun[] = [];
  try {
    for (const mode of ['always', 'auto']) {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-render-'));
      const out = join(dir, 'out.jsonl');
      const config = join(dir, 'crawlq.json');
      writeFileSync(config, JSON.stringify({ limitRules: [{ match: '127.0.5.1', clickSelector: '#more', clickSteps: 1 }] }));
      const started = performance.now();
      const crawl = startCrawlq(
        ['crawl', ...site.seeds, '--render', mode, '--workers', '1', '--concurrency', '8', '--browser-pages', '4', '--rate', 'none', '--domain-concurrency', '4', '--allow-private-network',
          '--max-depth', '1000', '--namespace', `bench-render-${mode}`, '--state-dir', dir, '--config', config, '--out', out, '--log-level', 'warn'],
        { REDIS_URL: redis.url },
      );
      let peak = 0;
      const done = exited(crawl);
      let finished = false;
      void done.then(() => (finished = true));
      while (!finished) {
        peak = Math.max(peak, treeRss(crawl.pid ?? -1));
        await sleep(200);
      }
      const code = await done;
      if (code !== 0) throw new Error(`crawl --render ${mode} exited with ${code}`);
      const seconds = (performance.now() - started) / 1000;
      const records = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { render?: unknown });
      runs.push({ mode, seconds, pages: records.length, rendered: records.filter((record) => record.render !== undefined).length, peakTreeBytes: peak });
    }
  } finally {
    await site.close();
    await redis.stop();
  }
  log(`mixed site: ${APP_PAGES + 1} app pages, ${STATIC_PAGES} static pages; 1 worker, concurrency 8, 4 browser pages, no rate limit (wall time includes the crawl's start)`);
  log('mode     pages  rendered  seconds  pages/s  peak RSS (crawl + worker + browser)');
  for (const run of runs) {
    log(`${run.mode.padEnd(8)} ${String(run.pages).padStart(5)}  ${String(run.rendered).padStart(8)}  ${fmt(run.seconds).padStart(7)}  ${fmt(run.pages / run.seconds, 2).padStart(7)}  ${fmt(run.peakTreeBytes / 2 ** 20, 0)} MB`);
  }
  const [always, auto] = runs;
  if (always && auto) log(`auto / always: ${fmt(auto.pages / auto.seconds / (always.pages / always.seconds), 2)}x pages/s`);
  return runs;
}
