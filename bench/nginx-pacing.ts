// Pacing judged by a real rate limiter: nginx `limit_req` at
// 5 r/s per host with no burst, three loopback hosts, `crawlq crawl --workers 3
// --rate 5/1s --domain-concurrency 2`. Prints the requests nginx refused (429)
// and how long each host took at the server against the bound the rate sets,
// with the default margins and with none (`--spacing-margin 0 --safety-margin 0`:
// starts exactly duration/max apart). Both margins must be zeroed for that: the
// pace is the larger of the two, so `--spacing-margin 0` alone changes nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GroupStatus } from '@crawlq/group-limiter';
import { startTestNginx, startTestRedis, type NginxLogEntry } from '@crawlq/testing';
import { exited, fmt, startCrawlq } from './support.js';

const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const PAGES_PER_HOST = 100;
const RATE_PER_SECOND = 5;

export async function benchNginxPacing(log: (line: string) => void): Promise<void> {
  log(`nginx limit_req ${RATE_PER_SECOND} r/s per host, no burst; ${HOSTS.length} hosts x ${PAGES_PER_HOST + 1} pages + robots.txt; crawl --workers 3 --rate ${RATE_PER_SECOND}/1s --domain-concurrency 2`);
  const variants: readonly Variant[] = [
    { label: 'default margins', flags: [] },
    { label: 'no margin (--spacing-margin 0 --safety-margin 0)', flags: ['--spacing-margin', '0', '--safety-margin', '0'] },
  ];
  for (const variant of variants) await run(variant, log);
}

interface Variant {
  readonly label: string;
  readonly flags: readonly string[];
}

async function run(variant: Variant, log: (line: string) => void): Promise<void> {
  const redis = await startTestRedis();
  const nginx = await startTestNginx({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, ratePerSecond: RATE_PER_SECOND });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-nginx-'));
    const started = performance.now();
    const crawl = startCrawlq(
      [
        'crawl', ...nginx.seeds, '--namespace', 'bench-nginx', '--allow-private-network', '--scope', 'host', '--max-depth', '1000',
        '--workers', '3', '--concurrency', '8', '--rate', `${RATE_PER_SECOND}/1s`, '--domain-concurrency', '2',
        ...variant.flags, '--out', join(dir, 'out.jsonl'),
      ],
      { REDIS_URL: redis.url },
    );
    let stderr = '';
    crawl.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await exited(crawl);
    const wallMs = performance.now() - started;
    if (code !== 0) throw new Error(`crawl exited ${code}: ${stderr.slice(-2000)}`);
    report(variant.label, await nginx.accessLog(), wallMs, log);
    const groups = startCrawlq(['group', 'list', '--namespace', 'bench-nginx', '--json'], { REDIS_URL: redis.url });
    let json = '';
    groups.stdout?.on('data', (chunk: Buffer) => (json += chunk.toString()));
    await exited(groups);
    for (const group of JSON.parse(json) as GroupStatus[]) {
      log(`  gate ${group.group}: pace ${fmt(group.paceMs)} ms (${fmt(1000 / group.paceMs, 2)}/s), admitted ${group.admitted}, late starts given back ${group.lateStarts}, slipped (sent late anyway) ${group.slippedStarts}`);
    }
  } finally {
    await nginx.stop();
    await redis.stop();
  }
}

function report(label: string, entries: readonly NginxLogEntry[], wallMs: number, log: (line: string) => void): void {
  const refused = entries.filter((entry) => entry.status === 429).length;
  log(`${label}: ${entries.length} requests, ${refused} answered 429; crawl command wall time ${fmt(wallMs / 1000)} s`);
  const spacingMs = 1000 / RATE_PER_SECOND;
  for (const host of HOSTS) {
    const times = entries.filter((entry) => entry.host === host).map((entry) => entry.atMs).sort((a, b) => a - b);
    const first = times[0] ?? 0;
    const spanMs = (times.at(-1) ?? 0) - first;
    // The fastest a zero-burst bucket allows: one accepted request per spacing.
    const boundMs = (times.length - 1) * spacingMs;
    const gaps = times.slice(1).map((at, i) => at - (times[i] ?? at));
    log(
      `  ${host}: ${times.length} requests in ${fmt(spanMs / 1000, 2)} s at the server, bound ${fmt(boundMs / 1000, 2)} s ` +
        `(x${fmt(spanMs / boundMs, 3)}); smallest gap ${Math.min(...gaps)} ms, ` +
        `gaps < ${spacingMs} ms: ${gaps.filter((gap) => gap < spacingMs).length}`,
    );
  }
}
