// Results sinks: PostgreSQL (batched upsert) against the JSONL file, on the same crawl.
// Part 1 runs the whole crawl through one worker process with each sink (pages/s);
// part 2 replays that crawl's records straight into each sink (rows/s), so the
// sink's own cost is not hidden behind fetching and parsing.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawlq/config';
import { openCrawlServices } from '@crawlq/crawl-control';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { openJsonlSink, openPostgresSink, type ResultSink, type SinkRecord } from '@crawlq/sink';
import { startTestPostgres, startTestRedis, type TestPostgres } from '@crawlq/testing';
import pg from 'pg';
import { exited, fmt, startCrawlq, untilCrawlDone, waitForLine } from './support.js';

const HOSTS = Array.from({ length: 5 }, (_, i) => `127.0.2.${i + 1}`);
const PAGES_PER_HOST = Number(process.env.CRAWLQ_BENCH_PAGES_PER_HOST ?? 100);
const CONCURRENCY = 32;
/** Writers in flight when replaying records (a worker's concurrency). */
const WRITERS = 64;
const REPLAY_ROUNDS = 3;
const CRAWL_ROUNDS = 2;

interface CrawlRun {
  readonly pages: number;
  readonly seconds: number;
  readonly records: SinkRecord[];
}

async function countRows(database: TestPostgres, namespace: string): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM crawlq_results WHERE namespace = $1', [namespace]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

async function crawl(site: DemoSite, sink: { kind: 'jsonl' } | { kind: 'postgres'; database: TestPostgres }, namespace: string): Promise<CrawlRun> {
  const redis = await startTestRedis();
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-sink-'));
  const out = join(dir, 'out.jsonl');
  const flags = ['--namespace', namespace, '--allow-private-network', '--scope', 'any', '--max-depth', '1000', '--rate', 'none', '--domain-concurrency', '10000'];
  const sinkFlags = sink.kind === 'jsonl' ? ['--out', out] : ['--database-url', sink.database.url];
  const worker = startCrawlq(['worker', ...flags, '--concurrency', String(CONCURRENCY), ...sinkFlags], { REDIS_URL: redis.url });
  let workerLog = '';
  worker.stderr?.on('data', (chunk: Buffer) => (workerLog += chunk.toString()));
  try {
    await waitForLine(worker, /started/, 120_000);
    const config = loadConfig({ flags: { namespace, allowPrivateNetwork: true, scope: 'any', maxDepth: 1000, rate: 'none', domainConcurrency: 10_000 } });
    const services = await openCrawlServices(config, redis.url, { role: 'producer' });
    const started = performance.now();
    await services.frontier.addSeeds(site.seeds);
    await untilCrawlDone(services, 'bench');
    const seconds = (performance.now() - started) / 1000;
    await services.close();
    if (/cannot write|waiting for/.test(workerLog)) process.stderr.write(workerLog);
    if (sink.kind === 'postgres') return { pages: await countRows(sink.database, namespace), seconds, records: [] };
    const records = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as SinkRecord);
    return { pages: records.length, seconds, records };
  } finally {
    worker.kill('SIGTERM');
    await exited(worker);
    await redis.stop();
  }
}

/** Writes every record through `sink` with WRITERS in flight, each awaiting its write as a job does. */
async function replay(records: readonly SinkRecord[], sink: ResultSink): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let i = next++; i < records.length; i = next++) await sink.write(records[i]!);
    }),
  );
  await sink.close();
  return records.length / ((performance.now() - started) / 1000);
}

export async function benchSinks(log: (line: string) => void): Promise<{ crawlRatio: number; replayRatio: number }> {
  const [site, database] = await Promise.all([
    startDemoSite({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, linksPerPage: 5, crossHostLinksPerPage: 1, pageBytes: 2000 }),
    startTestPostgres(),
  ]);
  try {
    const total = site.reachable({ seeds: site.seeds, maxDepth: 10_000, scope: 'any' }).size;
    log(`site: ${HOSTS.length} hosts, ${total} pages; 1 worker process, concurrency ${CONCURRENCY}, politeness out of the way; PostgreSQL ${await serverVersion(database)} on loopback (fsync off)`);
    // Same crawl with each sink, interleaved over rounds so both see the same background load; best of each.
    let jsonl: CrawlRun | undefined;
    let jsonlRate = 0;
    let pgRate = 0;
    for (let round = 0; round < CRAWL_ROUNDS; round += 1) {
      const file = await crawl(site, { kind: 'jsonl' }, `bench-jsonl-${round}`);
      const postgres = await crawl(site, { kind: 'postgres', database }, `bench-pg-${round}`);
      log(`crawl round ${round + 1}: JSONL file ${file.pages} pages in ${fmt(file.seconds, 2)} s = ${fmt(file.pages / file.seconds)} pages/s; PostgreSQL ${postgres.pages} rows in ${fmt(postgres.seconds, 2)} s = ${fmt(postgres.pages / postgres.seconds)} pages/s`);
      jsonl ??= file;
      jsonlRate = Math.max(jsonlRate, file.pages / file.seconds);
      pgRate = Math.max(pgRate, postgres.pages / postgres.seconds);
    }
    if (!jsonl) throw new Error('no crawl ran');
    log(`crawl best of ${CRAWL_ROUNDS}: JSONL ${fmt(jsonlRate)} pages/s, PostgreSQL ${fmt(pgRate)} pages/s, ratio PostgreSQL / JSONL ${fmt(pgRate / jsonlRate, 2)}`);

    const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-replay-'));
    let bestJsonl = 0;
    let bestPg = 0;
    for (let round = 0; round < REPLAY_ROUNDS; round += 1) {
      const fileRate = await replay(jsonl.records, openJsonlSink(join(dir, `replay-${round}.jsonl`)));
      const pgSink = await openPostgresSink({ url: database.url, namespace: `replay-${round}`, log });
      const dbRate = await replay(jsonl.records, pgSink);
      log(`replay round ${round + 1}: ${jsonl.records.length} records, ${WRITERS} writers: JSONL ${fmt(fileRate, 0)} rows/s, PostgreSQL ${fmt(dbRate, 0)} rows/s`);
      bestJsonl = Math.max(bestJsonl, fileRate);
      bestPg = Math.max(bestPg, dbRate);
    }
    log(`replay best of ${REPLAY_ROUNDS}: JSONL ${fmt(bestJsonl, 0)} rows/s, PostgreSQL ${fmt(bestPg, 0)} rows/s, ratio ${fmt(bestPg / bestJsonl, 2)}`);
    return { crawlRatio: pgRate / jsonlRate, replayRatio: bestPg / bestJsonl };
  } finally {
    await Promise.allSettled([site.close(), database.stop()]);
  }
}

async function serverVersion(database: TestPostgres): Promise<string> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version ?? '?';
  } finally {
    await client.end();
  }
}
