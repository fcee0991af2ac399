// The scale bench: one run, one loopback site (10 hosts x 1,000 pages, in
// a process of its own), three crawlers at the same concurrency side by side:
// the bare got + cheerio loop (the ceiling), `crawlq crawl` as users run it,
// and Crawlee's CheerioCrawler. Then what Redis itself says a page and a
// queued URL cost: commands (those inside Lua scripts included), script calls,
// round trips, CPU and memory. The capacity model (docs/09-benchmarks.md) is built from these.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REDIS_SERVER_SETTINGS } from '@crawlq/redis';
import { startTestRedis as startBareRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { redisSnapshot, redisWork, topCalls, type RedisWork } from './redis-stats.js';
import { STAMP } from '../apps/cli/build-freshness.mjs';
import { exited, fmt, REPO_ROOT, scriptLines, startScript, waitForLine, type CountedRoundTrips } from './support.js';

export const HOSTS = Array.from({ length: 10 }, (_, i) => `127.0.1.${i + 1}`);
export const PAGES_PER_HOST = 1_000;
export const CONCURRENCY = 64;
/** URLs `crawlq enqueue` queues, without workers, for the bytes-per-URL figure. */
const QUEUED_URLS = 100_000;

const SITE_PROCESS = fileURLToPath(new URL('./site-process.ts', import.meta.url));
const CONTENDER = fileURLToPath(new URL('./scale-contender.ts', import.meta.url));
const ROUND_TRIP_COUNTER = fileURLToPath(new URL('./round-trip-counter.ts', import.meta.url));
/** `pnpm crawlq`: the built CLI when `pnpm build` is current, else the sources through tsx. */
const LAUNCHER = join(REPO_ROOT, 'apps/cli/launcher.mjs');
/** Politeness out of the way, every link followed: the same work as the other two. */
export const CRAWL_FLAGS = ['--allow-private-network', '--scope', 'any', '--max-depth', '1000', '--rate', 'none', '--domain-concurrency', '10000', '--ignore-robots'];

/** A Redis on a free port, configured as crawlq's embedded server and infra/redis.conf configure theirs. */
export async function startTestRedis(): Promise<TestRedis> {
  const redis = await startBareRedis();
  const client = redis.client();
  for (const [name, value] of Object.entries(REDIS_SERVER_SETTINGS)) await client.config('SET', name, value);
  client.disconnect();
  return redis;
}

interface Timed {
  readonly pages: number;
  readonly seconds: number;
}

/** The site in its own process (its timings must not share an event loop with any crawler). */
export async function startSite(): Promise<{ seeds: string[]; close(): Promise<void> }> {
  const spec = { hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, linksPerPage: 5, crossHostLinksPerPage: 1, pageBytes: 2000 };
  const child = startScript(SITE_PROCESS, [JSON.stringify(spec)], {}, { ipc: true });
  const next = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const onMessage = (message: { type: string }) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        resolve(message as T);
      };
      child.on('message', onMessage);
    });
  await next('ready');
  child.send({ type: 'urls', pages: HOSTS.map((host) => [host, 0]) });
  const { urls } = await next<{ urls: string[] }>('urls');
  return {
    seeds: urls,
    async close() {
      child.send({ type: 'close' });
      await exited(child);
    },
  };
}

/**
 * The ceiling or Crawlee in a child process: its own timing of the crawl, spawn
 * to exit, and its CPU (under bash's `times`, like crawlq): CPU per page holds
 * on a busy machine where pages per second depend on the neighbours.
 */
export async function runContender(kind: 'bare' | 'crawlee', seeds: readonly string[], concurrency = CONCURRENCY): Promise<{ run: Timed; wholeSeconds: number; cpuSeconds: number }> {
  const storage = mkdtempSync(join(tmpdir(), 'crawlq-bench-crawlee-'));
  try {
    const started = performance.now();
    const child = underTimes(['--conditions=@crawlq/source', '--import', 'tsx', CONTENDER, kind, String(concurrency), ...seeds], { CRAWLEE_STORAGE_DIR: storage });
    const { stdout, stderr, code } = await collect(child);
    const wholeSeconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`${kind} exited with ${code}: ${stderr}`);
    return { run: JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Timed, wholeSeconds, cpuSeconds: childCpuSeconds(stderr) };
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
}

export async function collect(child: ChildProcess): Promise<{ stdout: string; stderr: string; code: number | null }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await exited(child);
  return { stdout, stderr, code };
}

/** A crawlq command as users run it (`pnpm crawlq`). */
export function spawnCrawlq(args: readonly string[]): ChildProcess {
  return underTimes([LAUNCHER, ...args], {});
}

/** `node <args>` under bash, whose `times` then reports the CPU of node and every process it waited for (crawlq's workers). */
function underTimes(args: readonly string[], extraEnv: Record<string, string>): ChildProcess {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(CRAWLQ_|REDIS_URL$)/.test(name)) env[name] = value;
  // Inherited by the workers `crawl` spawns (they run with its execArgv).
  const profile = process.env.CRAWLQ_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CRAWLQ_BENCH_PROFILE}`] : [];
  return spawn('bash', ['-c', '"$0" "$@"; code=$?; times >&2; exit $code', process.execPath, ...profile, ...args], {
    cwd: REPO_ROOT,
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** user + sys CPU seconds of bash's children (the last line `times` prints). */
export function childCpuSeconds(stderr: string): number {
  const match = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(stderr);
  if (!match) return Number.NaN;
  return Number(match[1]) * 60 + Number(match[2]) + Number(match[3]) * 60 + Number(match[4]);
}

export interface CrawlqRun extends Timed {
  /** Pages per second between the first progress line with pages and the last one. */
  readonly progressRate: number | undefined;
  /** Pages per second while the results file grew from 10% to 90% of its final size. */
  readonly resultsRate: number | undefined;
  readonly cpuSeconds: number;
  readonly redis: RedisWork;
  /** Where the whole command's time went, from the records' own times: spawn to the first request, first request to the last record, last record to exit. */
  readonly phases: { readonly startSeconds: number; readonly crawlSeconds: number; readonly exitSeconds: number };
}

/** How a bench runs `crawlq crawl`: its flags (politeness among them) and job concurrency. */
export interface CrawlqRunOptions {
  readonly flags: readonly string[];
  readonly concurrency: number;
  /** Called every 100 ms while the crawl runs (the regimes bench samples Redis memory). */
  readonly onTick?: () => void;
}

/** `crawlq crawl` start to exit, with Redis's own counters read before and after. */
export async function runCrawlq(redis: TestRedis, seeds: readonly string[], options: CrawlqRunOptions = { flags: CRAWL_FLAGS, concurrency: CONCURRENCY }): Promise<CrawlqRun> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-scale-'));
  const out = join(dir, 'out.jsonl');
  const client = redis.client();
  try {
    const before = await redisSnapshot(client);
    const started = performance.now();
    const startedEpoch = performance.timeOrigin + started;
    const child = spawnCrawlq(['crawl', ...seeds, '--redis-url', redis.url, '--namespace', 'bench', '--fresh', '--json', '--concurrency', String(options.concurrency), '--out', out, ...options.flags]);
    // The results file's size, sampled: a stat is cheap next to re-reading the file.
    const sizes: { at: number; bytes: number }[] = [];
    const sampler = setInterval(() => {
      if (existsSync(out)) sizes.push({ at: performance.now(), bytes: statSync(out).size });
      options.onTick?.();
    }, 100);
    const { stdout, stderr, code } = await collect(child);
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    const exitedEpoch = startedEpoch + seconds * 1000;
    const after = await redisSnapshot(client);
    if (code !== 0) throw new Error(`crawlq crawl exited with ${code}: ${stderr}`);
    let firstRequest = Number.POSITIVE_INFINITY;
    let lastRecord = 0;
    for (const line of readFileSync(out, 'utf8').split('\n')) {
      if (line === '') continue;
      const record = JSON.parse(line) as { requestedAt?: string; fetchedAt?: string };
      if (record.requestedAt) firstRequest = Math.min(firstRequest, Date.parse(record.requestedAt));
      if (record.fetchedAt) lastRecord = Math.max(lastRecord, Date.parse(record.fetchedAt));
    }
    const phases = { startSeconds: (firstRequest - startedEpoch) / 1000, crawlSeconds: (lastRecord - firstRequest) / 1000, exitSeconds: (exitedEpoch - lastRecord) / 1000 };
    const summary = JSON.parse(stdout) as { pages?: number; fetched?: number };
    const pages = summary.pages ?? summary.fetched ?? Number.NaN;
    const finalBytes = statSync(out).size;
    const at = (share: number) => sizes.find((sample) => sample.bytes >= finalBytes * share);
    const [from, to] = [at(0.1), at(0.9)];
    const resultsRate = from && to && to.at > from.at ? (pages * 0.8) / ((to.at - from.at) / 1000) : undefined;
    return { pages, seconds, progressRate: progressRate(stderr), resultsRate, cpuSeconds: childCpuSeconds(stderr), redis: redisWork(before, after), phases };
  } finally {
    client.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Steady state from the crawl's own progress lines (`[12.3s] pages 4567 (...)`, every 5 s off a terminal). */
function progressRate(stderr: string): number | undefined {
  const points = [...stderr.matchAll(/\[(\d+(?:\.\d+)?)s\] pages (\d+) /g)].map(([, s, p]) => ({ seconds: Number(s), pages: Number(p) })).filter((point) => point.pages > 0);
  const [first, last] = [points[0], points.at(-1)];
  return first && last && last.seconds > first.seconds ? (last.pages - first.pages) / (last.seconds - first.seconds) : undefined;
}

/** Client requests per page: a second crawl watched through MONITOR (not the timed one: MONITOR costs Redis CPU). */
export async function countRoundTrips(seeds: readonly string[], options?: CrawlqRunOptions): Promise<CountedRoundTrips & { pages: number }> {
  const redis = await startTestRedis();
  const counter = startScript(ROUND_TRIP_COUNTER, [redis.url], {});
  try {
    await waitForLine(counter, /ready/);
    const run = await runCrawlq(redis, seeds, options);
    const output = collect(counter);
    counter.kill('SIGTERM');
    const counted = JSON.parse((await output).stdout.trim().split('\n').at(-1) ?? '') as CountedRoundTrips;
    return { ...counted, pages: run.pages };
  } finally {
    counter.kill('SIGTERM');
    await redis.stop();
  }
}

interface QueuedBytes {
  readonly perUrl: number;
  readonly urlLength: number;
  readonly sampleJob: { readonly bytes: number; readonly encoding: string; readonly fields: string };
  /** The server's hash-max-listpack-value: a hash with a longer value is stored as a hashtable. */
  readonly listpackValue: string;
  readonly byKey: string;
}

/** `crawlq enqueue` of QUEUED_URLS URLs with no worker: Redis memory per queued URL, and where it goes. */
async function queuedBytes(): Promise<QueuedBytes> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-bytes-'));
  const file = join(dir, 'urls.txt');
  const urls = Array.from({ length: QUEUED_URLS }, (_, i) => `https://host-${i % 1000}.example/section/${Math.floor(i / 1000)}/page-${i}.html`);
  writeFileSync(file, `${urls.join('\n')}\n`);
  const redis = await startTestRedis();
  const client = redis.client();
  try {
    const before = await redisSnapshot(client);
    const { stderr, code } = await collect(spawnCrawlq(['enqueue', '--file', file, '--redis-url', redis.url, '--namespace', 'bench']));
    if (code !== 0) throw new Error(`crawlq enqueue exited with ${code}: ${stderr}`);
    const after = await redisSnapshot(client);
    return {
      perUrl: (after.usedMemory - before.usedMemory) / QUEUED_URLS,
      urlLength: urls.reduce((sum, url) => sum + url.length, 0) / QUEUED_URLS,
      ...(await keyBreakdown(client, QUEUED_URLS)),
    };
  } finally {
    client.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** MEMORY USAGE per queued URL of each kind of key (job hashes summed as one kind), and one job hash. */
async function keyBreakdown(client: Redis, queued: number): Promise<Pick<QueuedBytes, 'sampleJob' | 'byKey' | 'listpackValue'>> {
  const bytesByKind = new Map<string, number>();
  let sample: string | undefined;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
    cursor = next;
    const pipeline = client.pipeline();
    for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', '0');
    const sizes = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      // Keys that differ only by a job id (u + 22 base64url characters), a
      // group (a host name) or a number (a seen-set bucket) are one kind.
      const kind = key
        .split(':')
        .map((part) => (/^u[\w-]{22}$/.test(part) ? '<job>' : part.includes('.') ? '<group>' : /^\d+$/.test(part) ? '<n>' : part))
        .join(':');
      if (kind.endsWith(':<job>')) sample ??= key;
      bytesByKind.set(kind, (bytesByKind.get(kind) ?? 0) + Number(sizes[i]?.[1] ?? 0));
    });
  } while (cursor !== '0');
  const byKey = [...bytesByKind]
    .sort((a, b) => b[1] - a[1])
    .filter(([, bytes]) => bytes / queued >= 0.5)
    .map(([kind, bytes]) => `${kind} ${fmt(bytes / queued, 0)}`)
    .join(', ');
  const fields = sample ? await client.hgetall(sample) : {};
  return {
    sampleJob: {
      bytes: sample ? Number(await client.memory('USAGE', sample, 'SAMPLES', '0')) : Number.NaN,
      encoding: sample ? String(await client.object('ENCODING', sample)) : 'none',
      fields: Object.entries(fields).map(([name, value]) => `${name}=${value.length}B`).join(' '),
    },
    byKey,
    listpackValue: String(((await client.config('GET', 'hash-max-listpack-value')) as string[])[1]),
  };
}

export async function benchScale(log: (line: string) => void): Promise<void> {
  if (!existsSync(STAMP)) log('note: no `pnpm build` yet, so `pnpm crawlq` runs from source (slower start)');
  const site = await startSite();
  const redis = await startTestRedis();
  try {
    const pagesTotal = HOSTS.length * PAGES_PER_HOST;
    log(`site: ${HOSTS.length} loopback hosts x ${fmt(PAGES_PER_HOST, 0)} pages (${fmt(pagesTotal, 0)}) in a process of its own; concurrency ${CONCURRENCY} everywhere; crawlq with politeness out of the way (${CRAWL_FLAGS.join(' ')})`);
    await runContender('bare', site.seeds); // warm-up: the site's JIT and sockets
    // Interleaved, one after another, so each sees the same background load.
    const ceiling = await runContender('bare', site.seeds);
    const crawlq = await runCrawlq(redis, site.seeds);
    // BENCH_SKIP_CRAWLEE=1: Crawlee takes minutes on a loaded machine; its rows then say so.
    const crawlee = process.env.BENCH_SKIP_CRAWLEE === '1' ? undefined : await runContender('crawlee', site.seeds);
    const ceilingRate = ceiling.run.pages / ceiling.run.seconds;
    const crawlqRate = crawlq.pages / crawlq.seconds;
    const crawleeRate = crawlee ? crawlee.run.pages / crawlee.run.seconds : undefined;
    const row = (name: string, pages: number, seconds: number | undefined, rate: number | undefined) =>
      `| ${name} | ${fmt(pages, 0)} | ${seconds === undefined ? '' : fmt(seconds, 2)} | ${rate === undefined ? 'n/a' : fmt(rate, 0)} | ${rate === undefined ? 'n/a' : fmt(rate / ceilingRate, 2)} |`;
    log('| | pages | seconds | pages/s | vs ceiling |');
    log('|---|---|---|---|---|');
    log(row('bare got 14 + cheerio BFS loop (the ceiling), in-process timing', ceiling.run.pages, ceiling.run.seconds, ceilingRate));
    log(row('`crawlq crawl`, whole command (spawn to exit, 1 worker process)', crawlq.pages, crawlq.seconds, crawlqRate));
    log(row('`crawlq crawl`, steady state from its progress lines', crawlq.pages, undefined, crawlq.progressRate));
    log(row('`crawlq crawl`, steady state from its results file (10%-90%)', crawlq.pages, undefined, crawlq.resultsRate));
    const { startSeconds, crawlSeconds, exitSeconds } = crawlq.phases;
    log(`crawlq whole command, from its records' times: spawn to first request ${fmt(startSeconds, 2)} s, first request to last record ${fmt(crawlSeconds, 2)} s (${fmt(crawlq.pages / crawlSeconds, 0)} pages/s, ${fmt(crawlq.pages / crawlSeconds / ceilingRate, 2)} of the ceiling), last record to exit ${fmt(exitSeconds, 2)} s`);
    const cpu = (name: string, seconds: number, pages: number) => `${name} ${fmt((seconds / pages) * 1e6, 0)} us`;
    if (crawlee && crawleeRate !== undefined) {
      log(row('Crawlee 3.18.1 CheerioCrawler, in-process timing of run()', crawlee.run.pages, crawlee.run.seconds, crawleeRate));
      log(row('Crawlee 3.18.1 CheerioCrawler, whole process (spawn to exit)', crawlee.run.pages, crawlee.wholeSeconds, crawlee.run.pages / crawlee.wholeSeconds));
    } else {
      log('| Crawlee 3.18.1 CheerioCrawler | not run (BENCH_SKIP_CRAWLEE=1) | | | |');
    }
    log(`CPU per page, whole processes (process start included): ${cpu('ceiling', ceiling.cpuSeconds, ceiling.run.pages)}, ${cpu('crawlq crawl + its worker', crawlq.cpuSeconds, crawlq.pages)}${crawlee ? `, ${cpu('Crawlee', crawlee.cpuSeconds, crawlee.run.pages)}` : ''}; Redis ${fmt((crawlq.redis.cpuSeconds / crawlq.pages) * 1e6, 0)} us more for crawlq`);
    if (crawlee && crawleeRate !== undefined) {
      log(`crawlq vs Crawlee: whole command vs Crawlee's run() ${fmt(crawlqRate / crawleeRate, 2)}x; whole command vs whole process ${fmt(crawlqRate / (crawlee.run.pages / crawlee.wholeSeconds), 2)}x`);
    }

    const work = crawlq.redis;
    const pages = crawlq.pages;
    log(`Redis per fetched page: ${fmt(work.commands / pages, 1)} commands executed (INFO commandstats, those inside Lua scripts included), ${fmt(work.scripts / pages, 2)} of them script calls (EVALSHA ${fmt((work.calls.get('evalsha') ?? 0) / pages, 2)})`);
    log(`Redis per fetched page, most called: ${topCalls(work, pages, 10)}`);
    log(`Redis CPU (INFO cpu, user+sys): ${fmt(work.cpuSeconds, 2)} s for ${fmt(pages, 0)} pages = ${fmt((work.cpuSeconds / pages) * 1e6, 0)} us per page -> ${fmt(pages / work.cpuSeconds, 0)} pages/s per Redis core at this load`);
    log(`crawlq processes (crawl + its worker) CPU: ${fmt(crawlq.cpuSeconds, 2)} s = ${fmt((crawlq.cpuSeconds / pages) * 1e6, 0)} us per page -> ${fmt(pages / crawlq.cpuSeconds, 0)} pages/s per worker core (start-up included)`);
    const trips = await countRoundTrips(site.seeds);
    log(`round trips per fetched page (MONITOR, second crawl, MULTI..EXEC as one, script-inner commands not counted): ${fmt(trips.roundTrips / trips.pages, 2)} (${fmt(trips.pages, 0)} pages; most: ${Object.entries(trips.breakdown).slice(0, 8).map(([name, count]) => `${name} ${fmt(count / trips.pages, 2)}`).join(', ')})`);
    log('Redis commands per fetched page by script (MONITOR, the same second crawl):');
    for (const line of scriptLines(trips.scripts, trips.pages, process.env.BENCH_BREAKDOWN ? Number.POSITIVE_INFINITY : 6)) log(line);
    const bytes = await queuedBytes();
    log(`Redis per queued URL (crawlq enqueue of ${fmt(QUEUED_URLS, 0)} URLs over 1,000 hosts, mean ${fmt(bytes.urlLength, 0)} chars, default politeness, no workers): ${fmt(bytes.perUrl, 0)} bytes (INFO memory used_memory delta)`);
    log(`Redis per queued URL by key (MEMORY USAGE sum / URLs): ${bytes.byKey}`);
    log(
      Number.isNaN(bytes.sampleJob.bytes)
        ? 'job hashes: none (every queued URL waits as a backlog entry until its group can use it)'
        : `one job hash: MEMORY USAGE ${fmt(bytes.sampleJob.bytes, 0)} bytes, encoding ${bytes.sampleJob.encoding} (server hash-max-listpack-value ${bytes.listpackValue}); fields: ${bytes.sampleJob.fields}`,
    );
  } finally {
    await redis.stop();
    await site.close();
  }
}
