// Adaptive politeness: one fixture crawled twice by three worker
// processes, at fixed pace and with --adaptive, judged by the web server's own
// request log. Prints both runs side by side, then each host's pace over time
// in the adaptive run (the shared pace factor read from the group hashes, next
// to what the server saw in the same seconds).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawlq/config';
import { openCrawlServices, publishCrawlDefinition } from '@crawlq/crawl-control';
import { peakInFlight, type RequestRecord } from '@crawlq/demo-site';
import type { GroupStatus } from '@crawlq/group-limiter';
import { startTestRedis } from '@crawlq/testing';
import { startSiteProcess, type SiteProcess } from './site-server.js';
import { exited, fmt, startCrawlq, untilCrawlDone, waitForLine } from './support.js';

interface Host {
  readonly name: string;
  readonly address: string;
  readonly pages: number;
}

/** Latency 100 ms x requests in flight; no rate, 8 slots (a limit rule). */
const LOADED: Host = { name: 'loaded', address: '127.0.4.1', pages: 200 };
/** 503 to a request when more than 5 arrived within the last second; 20/1s, 4 slots. */
const SHEDDING: Host = { name: 'shedding', address: '127.0.4.2', pages: 100 };
/** Healthy; 20/1s, 4 slots. */
const FAST: Host = { name: 'fast', address: '127.0.4.3', pages: 200 };
const HOSTS = [LOADED, SHEDDING, FAST];
const SAMPLE_MS = 1_000;
const TABLE_STEP_S = 2;

interface PaceSample {
  readonly atMs: number;
  readonly groups: readonly GroupStatus[];
}

interface CrawlRun {
  readonly seconds: number;
  /** Server-clock ms at which the seeds went in. */
  readonly startedAt: number;
  readonly requests: readonly RequestRecord[];
  /** Result records per host: pages that came back 200. */
  readonly ok: ReadonlyMap<string, number>;
  readonly samples: readonly PaceSample[];
}

async function crawl(site: SiteProcess, urls: readonly string[], adaptive: boolean): Promise<CrawlRun> {
  const redis = await startTestRedis();
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-adaptive-'));
  const configFile = join(dir, 'crawl.json');
  writeFileSync(configFile, JSON.stringify({ limitRules: [{ match: LOADED.address, rate: 'none', concurrency: 8 }] }));
  const flags = ['--namespace', 'bench', '--allow-private-network', '--ignore-robots', '--max-depth', '0', '--rate', '20/1s', '--domain-concurrency', '4', '--config', configFile, ...(adaptive ? ['--adaptive'] : [])];
  const children = Array.from({ length: 3 }, (_, i) => startCrawlq(['worker', ...flags, '--concurrency', '16', '--out', join(dir, `out-${i}.jsonl`)], { REDIS_URL: redis.url }));
  try {
    await Promise.all(children.map((child) => waitForLine(child, /started/)));
    const config = loadConfig({
      flags: { namespace: 'bench', allowPrivateNetwork: true, ignoreRobots: true, maxDepth: 0, rate: '20/1s', domainConcurrency: 4, adaptive },
      configFile,
    });
    const services = await openCrawlServices(config, redis.url, { role: 'producer' });
    await publishCrawlDefinition(services, 'bench');
    await site.reset();
    const samples: PaceSample[] = [];
    const startedAt = Date.now();
    const started = performance.now();
    const sampler = setInterval(() => {
      const atMs = Date.now() - startedAt;
      services.limiter.list().then((groups) => samples.push({ atMs, groups }), () => undefined);
    }, SAMPLE_MS);
    await services.frontier.addSeeds([...urls]);
    await untilCrawlDone(services, services.config.namespace, 50);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    await services.close();
    const ok = new Map<string, number>();
    for (const [i] of children.entries()) {
      for (const line of readFileSync(join(dir, `out-${i}.jsonl`), 'utf8').split('\n')) {
        if (line === '') continue;
        const record = JSON.parse(line) as { url: string; status: number };
        const address = new URL(record.url).hostname;
        if (record.status === 200) ok.set(address, (ok.get(address) ?? 0) + 1);
      }
    }
    return { seconds, startedAt, requests: await site.records(), ok, samples };
  } finally {
    children.forEach((child) => child.kill('SIGTERM'));
    await Promise.all(children.map((child) => exited(child)));
    await redis.stop();
  }
}

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;
}

/** What the server saw of one host in one run. */
function hostFigures(run: CrawlRun, host: Host): string[] {
  const requests = run.requests.filter((request) => request.host === host.address);
  const first = Math.min(...requests.map((request) => request.startedAt));
  const last = Math.max(...requests.map((request) => request.endedAt));
  const latencies = requests.map((request) => request.endedAt - request.startedAt);
  return [
    fmt((last - first) / 1000, 1),
    String(requests.length),
    String(requests.filter((request) => request.status === 503).length),
    `${run.ok.get(host.address) ?? 0}/${host.pages}`,
    fmt(percentile(latencies, 0.5), 0),
    fmt(percentile(latencies, 0.9), 0),
    String(peakInFlight(requests)),
  ];
}

const FIGURES = ['host crawl time (s)', 'requests', '503 answers', 'pages 200 / pages', 'latency p50 (ms)', 'latency p90 (ms)', 'in flight, peak'];

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  '));
}

/** Each host's pace over time in a run: the pace factor and cap from the group hash, and what the server saw in the same step. */
function paceTable(run: CrawlRun): string[] {
  const header = ['t (s)', ...HOSTS.flatMap((host) => [`${host.name} pace`, 'cap', 'req/s', 'p50 ms', '503s'])];
  const rows: string[][] = [header];
  const end = Math.max(...run.requests.map((request) => request.endedAt)) - run.startedAt;
  for (let from = 0; from < end; from += TABLE_STEP_S * 1000) {
    const to = from + TABLE_STEP_S * 1000;
    const sample = [...run.samples].reverse().find((candidate) => candidate.atMs <= to);
    const row = [`${from / 1000}-${to / 1000}`];
    for (const host of HOSTS) {
      const status = sample?.groups.find((group) => group.group.startsWith(`${host.address}:`));
      const inStep = run.requests.filter((request) => request.host === host.address && request.startedAt - run.startedAt >= from && request.startedAt - run.startedAt < to);
      row.push(
        status === undefined ? '-' : fmt(status.paceFactor, 2),
        status?.effectiveConcurrency === null || status === undefined ? '-' : String(status.effectiveConcurrency),
        fmt(inStep.length / TABLE_STEP_S, 1),
        inStep.length === 0 ? '-' : fmt(percentile(inStep.map((request) => request.endedAt - request.startedAt), 0.5), 0),
        String(inStep.filter((request) => request.status === 503).length),
      );
    }
    rows.push(row);
  }
  return table(rows);
}

export async function benchAdaptive(log: (line: string) => void): Promise<void> {
  const site = await startSiteProcess({
    hosts: HOSTS.map((host) => host.address),
    pagesPerHost: Math.max(...HOSTS.map((host) => host.pages)),
    linksPerPage: 1,
    load: {
      [LOADED.address]: { latencyPerInFlightMs: 100 },
      [SHEDDING.address]: { shedAbove: { max: 5, durationMs: 1_000 } },
    },
  });
  try {
    const urls = await site.urls(HOSTS.flatMap((host) => Array.from({ length: host.pages }, (_, page) => [host.address, page] as const)));
    // Interleaved: every host is crawled from the start.
    urls.sort((a, b) => (a.split('/').at(-1) ?? '').localeCompare(b.split('/').at(-1) ?? ''));
    const fixed = await crawl(site, urls, false);
    const adaptive = await crawl(site, urls, true);
    log(`fixture: ${LOADED.name} ${LOADED.address} answers after 100 ms x requests in flight (no rate, 8 slots); ${SHEDDING.name} ${SHEDDING.address} answers 503 above 5 requests/s (20/1s, 4 slots); ${FAST.name} ${FAST.address} healthy (20/1s, 4 slots); 3 workers x 16, judged at the server`);
    const rows: string[][] = [['', 'fixed pace', '--adaptive']];
    rows.push(['whole crawl (s)', fmt(fixed.seconds, 1), fmt(adaptive.seconds, 1)]);
    const total = (run: CrawlRun) => run.requests.filter((request) => request.status === 503).length;
    rows.push(['503 answers, all hosts', String(total(fixed)), String(total(adaptive))]);
    const pages = HOSTS.reduce((sum, host) => sum + host.pages, 0);
    const okCount = (run: CrawlRun) => [...run.ok.values()].reduce((sum, count) => sum + count, 0);
    rows.push(['pages 200, all hosts', `${okCount(fixed)}/${pages}`, `${okCount(adaptive)}/${pages}`]);
    for (const host of HOSTS) {
      const left = hostFigures(fixed, host);
      const right = hostFigures(adaptive, host);
      FIGURES.forEach((figure, i) => rows.push([`${host.name}: ${figure}`, left[i] ?? '', right[i] ?? '']));
    }
    for (const line of table(rows)) log(line);
    log('');
    log(`pace over time, --adaptive run (pace: shared pace factor from the group hash at the end of the step; cap: concurrency in force; req/s, p50, 503s: the server's log for requests that started in the step)`);
    for (const line of paceTable(adaptive)) log(line);
  } finally {
    await site.close();
  }
}
