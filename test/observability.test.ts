import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { freePort, freePortPair, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { workerCommandLines } from './support/processes.js';
import { StatusReader } from './support/crawl-status.js';
import { readRecords } from './support/records.js';
import { samples } from './support/metrics-text.js';

// Logs, metrics and health of real worker processes against a real Redis
//. Metrics text is checked by Prometheus's own parser and linter.

const HOSTS = ['127.0.0.31', '127.0.0.32'];
const HAS_PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

let redis: TestRedis;
let site: DemoSite;

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({
    hosts: HOSTS,
    pagesPerHost: 30,
    linksPerPage: 4,
    crossHostLinksPerPage: 1,
    brokenLinksPerPage: 1,
    // Always 500: got retries it, BullMQ retries it, then it is dead-lettered.
    faults: [{ host: HOSTS[0], path: '/p/3', status: 500 }],
  });
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

interface LogLine {
  readonly time: string;
  readonly level: string;
  readonly msg: string;
  readonly pid: number;
  readonly worker: string;
  readonly namespace: string;
  readonly stats?: { pages: number };
}

/** Every line must be a JSON object with the fields the issue names. */
function parseLogLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`stderr line is not JSON: ${line}`);
      }
      const entry = parsed as LogLine;
      expect(entry, line).toMatchObject({ time: expect.any(String), level: expect.any(String), msg: expect.any(String), pid: expect.any(Number), worker: expect.any(String), namespace: expect.any(String) });
      expect(Number.isNaN(Date.parse(entry.time)), line).toBe(false);
      return entry;
    });
}


function sum(values: Map<string, number>, name: string): number {
  let total = 0;
  for (const [series, value] of values) if (series === name || series.startsWith(`${name}{`)) total += value;
  return total;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

function promtoolCheck(text: string): { status: number | null; output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text });
  return { status: result.status, output: `${result.stdout.toString()}${result.stderr.toString()}` };
}

describe('a worker with --metrics-port against a real Redis', () => {
  it('serves Prometheus metrics whose counters follow the crawl, JSON logs with a stats line, and /healthz turns 503 when Redis stops', { timeout: 300_000 }, async () => {
    site.resetRecords();
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-ops-'));
    const out = join(dir, 'results.jsonl');
    const namespace = 'ops-metrics';
    const port = await freePort();
    const common = ['--namespace', namespace, '--allow-private-network', '--rate', 'none', '--scope', 'any', '--max-depth', '50', '--attempts', '2', '--backoff', '100ms'];
    const env = cliEnv(redis.url);
    // Workers default to JSON lines because stderr is a pipe here, not a terminal.
    const worker = startCli(['worker', ...common, '--out', out, '--concurrency', '4', '--fetch-retries', '1', '--fetch-backoff', '50ms', '--metrics-port', String(port), '--stats-interval', '1s'], { env });
    let stderr = '';
    worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      const ready = await waitFor(async () => (await get(`${base}/readyz`).catch(() => undefined))?.status === 200 || undefined, { timeoutMs: 60_000, what: 'the worker to be ready' });
      expect(ready).toBe(true);
      expect((await get(`${base}/healthz`)).status).toBe(200);
      const idle = samples((await get(`${base}/metrics`)).text);
      expect(sum(idle, 'crawlq_pages_total')).toBe(0);

      const enqueued = await runCli(['enqueue', ...site.seeds, ...common], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      // Read in this process, as `crawlq status` reads it: a command started every poll took CPU from the worker.
      const reader = new StatusReader(redis.url, namespace);
      try {
        await waitFor(
          async () => {
            const status = await reader.read();
            return status.done && status.completed > 0 ? true : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 200, what: 'the crawl to finish' },
        );
      } finally {
        await reader.close();
      }

      // The fleet gauges are read from Redis and cached for 2 s: scrape until that cache
      // has seen the finished crawl (the counters below are this process's own and exact).
      const { status, text } = await waitFor(
        async () => {
          const scraped = await get(`${base}/metrics`);
          const gauges = samples(scraped.text);
          return scraped.status !== 200 || (gauges.get('crawlq_queue_jobs{state="due"}') === 0 && gauges.get('crawlq_queue_jobs{state="active"}') === 0) ? scraped : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500, what: 'the fleet gauges to show the finished crawl' },
      );
      expect(status).toBe(200);
      if (HAS_PROMTOOL) {
        const check = promtoolCheck(text);
        expect(check.status, check.output).toBe(0);
      } else {
        console.warn('promtool not found (Debian package "prometheus"; infra/setup.sh installs it): Prometheus text format not validated by promtool');
      }
      const done = samples(text);
      // This worker is the only one: its page counter is exactly the pages it wrote.
      const records = readRecords(out).filter((record) => !('skipped' in record));
      expect(sum(done, 'crawlq_pages_total')).toBe(records.length);
      expect(done.get('crawlq_pages_total{status_class="4xx"}')).toBe(records.filter((record) => record.status >= 400 && record.status < 500).length);
      expect(done.get('crawlq_fetch_duration_seconds_count')).toBe(records.length);
      expect(done.get('crawlq_response_bytes_total')).toBe(records.reduce((total, record) => total + record.bytes, 0));
      // /p/3 failed every try: got's retry in each of its two attempts and the queue's retry between them (3), then one dead letter.
      expect(done.get('crawlq_retries_total')).toBeGreaterThanOrEqual(3);
      expect(done.get('crawlq_dead_letters_total{reason="http-500"}')).toBe(1);
      expect(done.get('crawlq_queue_jobs{state="due"}')).toBe(0);
      expect(done.get('crawlq_queue_jobs{state="active"}')).toBe(0);
      expect(done.has('crawlq_groups{state="paused"}')).toBe(true);
      expect(done.get('crawlq_fleet_read_ok')).toBe(1);
      // Bounded labels: no URL or host in any series.
      for (const series of done.keys()) expect(series).not.toMatch(/127\.0\.0\.|http:/);

      // Stats lines keep coming, one per interval, never closer together than it.
      // Lines logged during the crawl show fewer pages: wait for one logged after it.
      const finalStats = new RegExp(`^stats: ${records.length} pages \\(`);
      await waitFor(
        () => {
          const lines = parseLogLines(stderr).filter((line) => line.stats);
          return lines.length >= 3 && finalStats.test(lines.at(-1)?.msg ?? '') ? true : undefined;
        },
        { timeoutMs: 30_000, what: 'three stats lines, the last one after the crawl' },
      );
      const stats = parseLogLines(stderr).filter((line) => line.stats);
      for (let i = 1; i < stats.length; i += 1) {
        expect(Date.parse(stats[i]?.time ?? '') - Date.parse(stats[i - 1]?.time ?? '')).toBeGreaterThanOrEqual(990);
      }
      expect(stats.at(-1)?.msg).toMatch(new RegExp(`^stats: ${records.length} pages \\(`));
      expect(stats.at(-1)?.msg).toContain('dead letters 1');

      await redis.stop();
      const unhealthy = await waitFor(async () => {
        const answer = await get(`${base}/healthz`);
        return answer.status === 503 ? answer : undefined;
      }, { timeoutMs: 30_000, what: '/healthz to turn 503' });
      expect(unhealthy.text).toMatch(/redis/i);
      expect((await get(`${base}/readyz`)).status).toBe(503);
      // The scrape still answers, with the fleet figures of the last good read and their age (once the reader's short cache expires).
      const outage = await waitFor(async () => {
        const values = samples((await get(`${base}/metrics`)).text);
        return values.get('crawlq_fleet_read_ok') === 0 ? values : undefined;
      }, { timeoutMs: 30_000, what: 'crawlq_fleet_read_ok to turn 0' });
      expect(outage.get('crawlq_queue_jobs{state="due"}')).toBe(0);
      expect(outage.get('crawlq_fleet_read_age_seconds')).toBeGreaterThan(0);

      // Everything the worker wrote to stderr, outage included, is one JSON object per line.
      const lines = parseLogLines(stderr);
      expect(new Set(lines.map((line) => line.namespace))).toEqual(new Set([namespace]));
      expect(new Set(lines.map((line) => line.pid))).toEqual(new Set([worker.pid]));
    } finally {
      worker.kill('SIGKILL');
      await exited(worker);
      // Later tests in this file need a Redis again.
      redis = await startTestRedis();
    }
  });
});

describe('crawl: the workers it spawns', () => {
  it('serve metrics on --metrics-port + index, log JSON through the parent, and a normal finish logs no SIGTERM', { timeout: 300_000 }, async () => {
    site.resetRecords();
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-ops-crawl-'));
    const port = await freePortPair(); // worker-1 serves on port + 1
    const args = ['crawl', site.seeds[0] ?? '', '--workers', '2', '--namespace', 'ops-crawl', '--allow-private-network', '--rate', '2/1s', '--scope', 'any', '--max-depth', '50', '--attempts', '1', '--out', join(dir, 'out.jsonl'), '--metrics-port', String(port), '--state-dir', dir];
    const child = startCli(args, { env: cliEnv(redis.url) });
    let stderr = '';
    let stdout = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    // Both workers answer while the crawl runs: 60 pages at 2/s per host take 10 s or more,
    // longer than a worker takes to start on a loaded machine (at 10/s the crawl
    // could end before the second worker served its first /healthz).
    const seen = new Set<number>();
    const code = exited(child);
    let finished = false;
    void code.then(() => (finished = true));
    // A worker that renders nothing keeps V8's default young generation (render workers run with a smaller one).
    let workerLines: string[][] = [];
    while (!finished && seen.size < 2) {
      const running = workerCommandLines(child.pid ?? -1);
      if (running.length === 2) workerLines = running;
      for (const candidate of [port, port + 1]) {
        const answer = await get(`http://127.0.0.1:${candidate}/healthz`).catch(() => undefined);
        if (answer?.status === 200) seen.add(candidate);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await code, stderr).toBe(0);
    expect(stdout).toContain('crawl finished');
    // With the crawl's own log, so a worker that never answered says why.
    expect([...seen].sort(), stderr).toEqual([port, port + 1]);
    expect(workerLines).toHaveLength(2);
    for (const argv of workerLines) expect(argv.some((arg) => arg.includes('semi-space'))).toBe(false);
    const lines = parseLogLines(stderr);
    expect(new Set(lines.map((line) => line.worker))).toEqual(new Set(['crawl', 'worker-0', 'worker-1']));
    expect(stderr).not.toContain('SIGTERM');
    expect(lines.filter((line) => line.msg.startsWith('stopped'))).toHaveLength(2);
  });

  it('--log-format pretty writes short human lines and --log-level debug shows the quiet stop', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-ops-pretty-'));
    const result = await runCli(
      ['crawl', site.seeds[1] ?? '', '--namespace', 'ops-pretty', '--allow-private-network', '--rate', 'none', '--max-depth', '1', '--out', join(dir, 'out.jsonl'), '--log-format', 'pretty', '--log-level', 'debug', '--state-dir', dir],
      { env: cliEnv(redis.url) },
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S+ /);
    expect(result.stderr).toMatch(/DEBUG worker-0 crawl finished: finishing in-flight jobs/);
    expect(result.stderr).not.toContain('SIGTERM');
  });

  it('--log-level warn leaves out info lines', { timeout: 180_000 }, async () => {
    const quietPort = await freePort();
    const worker = startCli(['worker', '--namespace', 'ops-quiet', '--log-level', 'warn', '--stats-interval', '200ms', '--metrics-port', String(quietPort), '--out', join(mkdtempSync(join(tmpdir(), 'crawlq-ops-quiet-')), 'out.jsonl')], { env: cliEnv(redis.url) });
    let stderr = '';
    worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The same worker at the default level, as a control that info lines exist at all.
    const control = startCli(['worker', '--namespace', 'ops-quiet', '--stats-interval', '200ms', '--out', join(mkdtempSync(join(tmpdir(), 'crawlq-ops-loud-')), 'out.jsonl')], { env: cliEnv(redis.url) });
    let controlErr = '';
    control.stderr?.on('data', (chunk: Buffer) => (controlErr += chunk.toString()));
    try {
      await waitFor(async () => ((await get(`http://127.0.0.1:${quietPort}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined), { timeoutMs: 60_000, what: 'the quiet worker to be ready' });
      await waitFor(
        () => {
          const lines = parseLogLines(controlErr);
          return lines.some((line) => line.msg.startsWith('started')) && lines.filter((line) => line.msg.startsWith('stats:')).length >= 2 ? true : undefined;
        },
        { timeoutMs: 60_000, what: 'the control worker to start and log stats lines' },
      );
    } finally {
      worker.kill('SIGTERM');
      control.kill('SIGTERM');
    }
    expect(await exited(worker)).toBe(0);
    expect(await exited(control)).toBe(0);
    expect(parseLogLines(controlErr).some((line) => line.level === 'info' && line.msg.startsWith('started'))).toBe(true);
    expect(parseLogLines(stderr).filter((line) => line.level === 'info' || line.level === 'debug')).toEqual([]);
  });
});
