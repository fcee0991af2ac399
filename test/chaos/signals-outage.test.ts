import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { readCrawlProgress } from '@crawlq/frontier';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, startCli } from '../support/cli.js';
import { descendantsOf, processTable } from '../support/processes.js';
import { duplicates, readRecords } from '../support/records.js';

// A stop by signal keeps its promise whatever Redis does: SIGTERM or Ctrl-C to
// `crawl` while Redis does not answer stops within --grace-period (plus a
// bounded margin), not after --redis-outage-limit; SIGHUP is a stop too, with
// a message and the interrupted exit code, never a silent 129.
//
// The outage is made by SIGSTOP-ing this file's own redis-server: the
// connections stay open and nothing answers, which no 'close' event reports
// (a hung host looks the same). Before, `crawl` waited for Redis to answer
// again however long that took; --redis-outage-limit 10m here, so waiting out
// the limit fails the bound just as clearly.
//
// Timing bound (generous, for a loaded machine): with --grace-period 2s the
// workers are told at once, abandon their jobs once the grace period is over
// and Redis stays silent, and are killed 5 s after it at the latest; `crawl`
// then pings Redis for 2 s and drops its connections within 2 s: about 11 s.
// STOP_BOUND_MS is twice that.
const GRACE = '2s';
const STOP_BOUND_MS = 20_000;
const SLOW_PATH = '/p/5';
let site: DemoSite;
let redis: TestRedis;
const dir = mkdtempSync(join(tmpdir(), 'crawlq-signals-outage-'));
const out = join(dir, 'results.jsonl');
const namespace = 'signals-outage';

beforeAll(async () => {
  // A slow page, so that a request is under way when Redis stops answering.
  site = await startDemoSite({ hosts: ['127.0.0.151', '127.0.0.152'], pagesPerHost: 40, linksPerPage: 4, slowPages: [{ path: SLOW_PATH, delayMs: 8_000 }] });
  redis = await startTestRedis({ appendOnly: true });
});
afterAll(async () => {
  try {
    redisServer('SIGCONT'); // Left stopped by a test that failed half-way.
  } catch {
    // Not running.
  }
  await redis.stop();
  await site.close();
});

/** Sends `signal` to this file's redis-server (SIGSTOP: it stops answering, its connections stay open). */
function redisServer(signal: NodeJS.Signals): void {
  const row = processTable().find((each) => each.cmdline.startsWith('redis-server') && each.cmdline.includes(`:${redis.port}`));
  if (row === undefined) throw new Error(`no redis-server on port ${redis.port}`);
  process.kill(row.pid, signal);
}

interface Started {
  readonly child: ChildProcess;
  readonly output: { stderr: string; stdout: string };
}

function start(args: readonly string[]): Started {
  const child = startCli(args, { env: cliEnv(redis.url) });
  child.stdin?.end();
  const output = { stderr: '', stdout: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  return { child, output };
}

/** The same command both times: the second run resumes what the first left. */
function startCrawl(): Started {
  return start([
    'crawl', ...site.seeds, '--out', out, '--namespace', namespace, '--allow-private-network', '--rate', '10/1s', '--max-depth', '1000',
    '--workers', '2', '--concurrency', '4', '--state-dir', dir, '--grace-period', GRACE, '--redis-outage-limit', '10m',
    // Short enough that the jobs and gate slots left by the stopped workers come back soon on resume.
    // The request timeout outlasts the slow page (8 s), or every request for it is cut off and the
    // page dead-lettered instead of recorded; a lease is at least the request timeout.
    '--stall-timeout', '5s', '--lease-time', '15s', '--request-timeout', '15s',
  ]);
}

/** Exit code and time from now to the exit; a process still running after `boundMs` fails the test (and is killed). */
async function exitWithin(started: Started, boundMs: number): Promise<{ code: number | null; ms: number }> {
  const from = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), boundMs)));
  const code = await Promise.race([exited(started.child), late]);
  clearTimeout(timer);
  const ms = performance.now() - from;
  if (code === 'late') {
    for (const pid of [started.child.pid ?? -1, ...descendantsOf(started.child.pid ?? -1)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    throw new Error(`still running ${(boundMs / 1000).toFixed(0)} s after the signal\n${started.output.stderr.slice(-3000)}`);
  }
  return { code, ms };
}

const alive = (pid: number) => processTable().some((row) => row.pid === pid);
const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;

let inFlightAtStop = 0;

describe('SIGTERM to crawl while Redis does not answer', () => {
  it(`stops within --grace-period ${GRACE} plus a bounded margin (not --redis-outage-limit 10m): exit 130, one line with the resume hint, no process left`, async () => {
    const crawl = startCrawl();
    const pid = crawl.child.pid ?? -1;
    const slowInFlight = () => site.requests.some((request) => request.path === SLOW_PATH && Number.isNaN(request.endedAt));
    await waitFor(
      () => {
        if (crawl.child.exitCode !== null) throw new Error(`crawl exited early (${crawl.child.exitCode})\n${crawl.output.stderr}`);
        return readRecords(out).length >= 10 && slowInFlight() ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 50, what: 'the slow page to be under way' },
    );
    const processes = descendantsOf(pid);
    try {
      redisServer('SIGSTOP');
      crawl.child.kill('SIGTERM');
      const { code, ms } = await exitWithin(crawl, STOP_BOUND_MS);
      process.stdout.write(`signals: crawl exited ${(ms / 1000).toFixed(1)} s after SIGTERM, Redis stopped (grace period ${GRACE})\n`);
      expect(code, crawl.output.stderr).toBe(130);
      const lines = crawl.output.stderr.match(
        /^crawlq: SIGTERM while Redis was not answering; crawl stopped without waiting for it\. Run the same command again to resume \(the jobs in flight go back to the queue once Redis is back\)\.$/gm,
      );
      expect(lines, crawl.output.stderr).toHaveLength(1);
      expect(crawl.output.stderr).toContain('SIGTERM: stopping the crawl');
      expect(crawl.output.stderr).not.toMatch(STACK_FRAME);
      expect(processes.filter(alive)).toEqual([]);
    } finally {
      redisServer('SIGCONT');
    }
  }, 240_000);

  it('run again once Redis answers, the same command finishes: every page in the results, twice only for jobs in flight at the stop', async () => {
    // What was in flight when Redis stopped answering, as Redis kept it: these jobs run again.
    inFlightAtStop = (await readCrawlProgress(redis.client(), namespace)).active;
    const crawl = startCrawl();
    const code = await exited(crawl.child);
    expect(code, crawl.output.stderr).toBe(0);
    expect(crawl.output.stderr).toContain('resuming the unfinished crawl');
    const expected = site.reachable({ seeds: site.seeds, maxDepth: 1_000, scope: 'host' });
    const urls = readRecords(out).map((record) => record.url);
    expect(new Set(urls)).toEqual(expected);
    expect(duplicates(urls).length, JSON.stringify(duplicates(urls))).toBeLessThanOrEqual(inFlightAtStop);
    process.stdout.write(`signals: ${inFlightAtStop} jobs in flight at the stop, ${duplicates(urls).length} records twice, ${expected.size} pages\n`);
  }, 240_000);
});

describe('SIGTERM to a standalone worker while Redis does not answer', () => {
  it(`stops within --grace-period ${GRACE} plus a bounded margin: exit 0, says it stopped without Redis`, async () => {
    const worker = start(['worker', '--namespace', 'signals-worker', '--out', join(dir, 'worker.jsonl'), '--grace-period', GRACE, '--redis-outage-limit', '10m']);
    await waitFor(
      () => {
        if (worker.child.exitCode !== null) throw new Error(`worker exited early (${worker.child.exitCode})\n${worker.output.stderr}`);
        return worker.output.stderr.includes('started (concurrency') ? true : undefined;
      },
      { timeoutMs: 120_000, what: 'the worker to start' },
    );
    try {
      redisServer('SIGSTOP');
      worker.child.kill('SIGTERM');
      const { code, ms } = await exitWithin(worker, STOP_BOUND_MS);
      process.stdout.write(`signals: worker exited ${(ms / 1000).toFixed(1)} s after SIGTERM, Redis stopped (grace period ${GRACE})\n`);
      expect(code, worker.output.stderr).toBe(0);
      expect(worker.output.stderr).toContain('Redis did not answer once the grace period was over: stopped without it');
    } finally {
      redisServer('SIGCONT');
    }
  }, 180_000);
});

describe('SIGHUP', () => {
  it('stops crawl like SIGTERM: a message, the summary, exit 130; the same command resumes', async () => {
    const hupOut = join(dir, 'hup.jsonl');
    const args = ['crawl', ...site.seeds, '--out', hupOut, '--namespace', 'signals-hup', '--allow-private-network', '--rate', '5/1s', '--max-depth', '1000', '--state-dir', dir, '--grace-period', '10s'];
    const crawl = start(args);
    await waitFor(
      () => {
        if (crawl.child.exitCode !== null) throw new Error(`crawl exited early (${crawl.child.exitCode})\n${crawl.output.stderr}`);
        return readRecords(hupOut).length >= 3 ? true : undefined;
      },
      { timeoutMs: 120_000, what: 'the first pages' },
    );
    crawl.child.kill('SIGHUP');
    const code = await exited(crawl.child);
    expect(code, crawl.output.stderr).toBe(130);
    expect(crawl.output.stderr).toContain('SIGHUP: stopping the crawl; the workers finish their jobs within 10s (run the same command again to resume)');
    expect(crawl.output.stdout).toContain('crawl interrupted; run the same command again to resume');
    const again = start(args);
    expect(await exited(again.child), again.output.stderr).toBe(0);
    expect(again.output.stderr).toContain('resuming the unfinished crawl');
    const urls = readRecords(hupOut).map((record) => record.url);
    expect(new Set(urls)).toEqual(site.reachable({ seeds: site.seeds, maxDepth: 1_000, scope: 'host' }));
    expect(duplicates(urls)).toEqual([]);
  }, 300_000);

  it('stops a standalone worker like SIGTERM: it says so and exits 0', async () => {
    const worker = start(['worker', '--namespace', 'signals-hup-worker', '--out', join(dir, 'hup-worker.jsonl')]);
    await waitFor(
      () => {
        if (worker.child.exitCode !== null) throw new Error(`worker exited early (${worker.child.exitCode})\n${worker.output.stderr}`);
        return worker.output.stderr.includes('started (concurrency') ? true : undefined;
      },
      { timeoutMs: 120_000, what: 'the worker to start' },
    );
    worker.child.kill('SIGHUP');
    expect(await exited(worker.child), worker.output.stderr).toBe(0);
    expect(worker.output.stderr).toContain('SIGHUP: finishing in-flight jobs');
  }, 180_000);
});
