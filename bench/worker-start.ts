// Worker start-up ("a spawned worker processing jobs within 1 s of
// spawn"): the time from spawning `crawlq worker` to the first request a
// loopback site sees, judged at the site, beside bare Node in the same run.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis } from '@crawlq/testing';
import { BUILT_ENTRY, WORKER_BUNDLE } from '../apps/cli/build-freshness.mjs';
import { cpuSeconds, exited, median, startCrawlq, startNode } from './support.js';

interface TimedSite {
  readonly origin: string;
  /** When each path was first requested, on this process's clock. */
  readonly firstSeen: Map<string, number>;
  /** CPU seconds the watched process had used when it first requested each path. */
  readonly cpuAtFirst: Map<string, number>;
  /** The process whose CPU time is read at its requests. */
  watch(pid: number | undefined): void;
  readonly server: Server;
}

/** A loopback site that notes when each path is first requested. */
async function startTimedSite(): Promise<TimedSite> {
  const firstSeen = new Map<string, number>();
  const cpuAtFirst = new Map<string, number>();
  let watched: number | undefined;
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (!firstSeen.has(path)) {
      firstSeen.set(path, performance.now());
      const cpu = watched === undefined ? undefined : cpuSeconds(watched);
      if (cpu !== undefined) cpuAtFirst.set(path, cpu);
    }
    if (path === '/robots.txt') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>start</title><p>no links</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    firstSeen,
    cpuAtFirst,
    watch: (pid) => (watched = pid),
    server,
  };
}

/** Resolves with the time `predicate` first holds, polled every millisecond. */
async function until<T>(predicate: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: nothing within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** One way of starting a worker, and what was measured of it. */
interface Variant {
  readonly name: string;
  readonly args: readonly string[];
  readonly robots: number[];
  readonly page: number[];
  readonly started: number[];
  readonly robotsCpu: number[];
}

/**
 * Per round and way of starting a worker: a fresh namespace with one seed on
 * the loopback site, enqueued by the built CLI; then the worker is spawned,
 * and the site notes its first request (robots.txt: the first job's first
 * request) and the seed page's. The ways: `crawlq worker` (dist/main.js) and
 * the bundled worker that `crawl` spawns (dist/crawlq-worker.js) when the
 * build has one. Beside them, bare Node: `node -e 0` to exit, and a one-line
 * `http.get` to its request at the same site. Interleaved, median of `rounds`
 * after a warm-up round.
 */
export async function benchWorkerStart(log: (line: string) => void, rounds = 7): Promise<void> {
  const redis = await startTestRedis();
  const site = await startTimedSite();
  const env = { REDIS_URL: redis.url };
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-start-'));
  const variant = (name: string, args: readonly string[]): Variant => ({ name, args, robots: [], page: [], started: [], robotsCpu: [] });
  const variants = [
    variant('crawlq worker (dist/main.js)', [BUILT_ENTRY, 'worker']),
    ...(existsSync(WORKER_BUNDLE) ? [variant('bundled worker, what crawl spawns (dist/crawlq-worker.js)', [WORKER_BUNDLE, 'worker'])] : []),
  ];
  const bareExit: number[] = [];
  const bareRequest: number[] = [];
  try {
    for (let round = 0; round <= rounds; round += 1) {
      let started = performance.now();
      await exited(spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' }));
      const exit = performance.now() - started;

      const barePath = `/bare-${round}`;
      started = performance.now();
      const bareGet = spawn(process.execPath, ['-e', `require('node:http').get(${JSON.stringify(`${site.origin}${barePath}`)}, (r) => r.resume())`], { stdio: 'ignore' });
      const request = (await until(() => site.firstSeen.get(barePath), 30_000, 'bare node request')) - started;
      await exited(bareGet);
      if (round > 0) {
        bareExit.push(exit);
        bareRequest.push(request);
      }

      for (const [index, measured] of variants.entries()) {
        const namespace = `bench-start-${round}-${index}`;
        const seedPath = `/round-${round}-${index}/`;
        const enqueue = startCrawlq(['enqueue', '--namespace', namespace, '--allow-private-network', `${site.origin}${seedPath}`], env);
        if ((await exited(enqueue)) !== 0) throw new Error('enqueue failed');

        site.firstSeen.delete('/robots.txt');
        site.cpuAtFirst.delete('/robots.txt');
        started = performance.now();
        const worker = startNode([...measured.args, '--namespace', namespace, '--out', join(dir, `${namespace}.jsonl`)], env);
        site.watch(worker.pid);
        let startedLine: number | undefined;
        let output = '';
        worker.stderr?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (startedLine === undefined && /"msg":"started \(|\bstarted \(/.test(output)) startedLine = performance.now();
        });
        worker.stdout?.resume();
        try {
          const robots = (await until(() => site.firstSeen.get('/robots.txt'), 60_000, 'worker robots.txt request')) - started;
          const page = (await until(() => site.firstSeen.get(seedPath), 60_000, 'worker page request')) - started;
          const ready = (await until(() => startedLine, 60_000, 'worker "started" line')) - started;
          if (round === 0) continue; // warm-up: file cache
          measured.robots.push(robots);
          measured.page.push(page);
          measured.started.push(ready);
          measured.robotsCpu.push((site.cpuAtFirst.get('/robots.txt') ?? Number.NaN) * 1000);
        } catch (error) {
          throw new Error(`${measured.name}: ${String(error)}\nworker output:\n${output}`);
        } finally {
          worker.kill('SIGTERM');
          await exited(worker);
        }
      }
    }
  } finally {
    await new Promise((resolve) => site.server.close(resolve));
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const bare = median(bareExit);
  const row = (name: string, values: readonly number[]) =>
    log(`  ${name.padEnd(46)} ${median(values).toFixed(0).padStart(5)} ms (excess over node -e 0: ${(median(values) - bare).toFixed(0).padStart(5)} ms)`);
  log(`worker-start: median of ${rounds} rounds, interleaved; times from spawn, requests judged at the site (goal: first request within 1,000 ms)`);
  row('node -e 0, to exit', bareExit);
  row("bare node: spawn to its http.get's request", bareRequest);
  if (variants.length === 1) log(`  (no dist/crawlq-worker.js in this build)`);
  for (const measured of variants) {
    log(`  ${measured.name}:`);
    row('  spawn to its first request (robots.txt)', measured.robots);
    row("  spawn to the seed page's request", measured.page);
    row('  spawn to its "started" log line', measured.started);
    // Less disturbed by a busy machine than wall time; clock ticks of 10 ms.
    log(`  ${'  CPU time used by its first request'.padEnd(46)} ${median(measured.robotsCpu).toFixed(0).padStart(5)} ms`);
  }
}
