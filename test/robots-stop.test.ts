import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { readRecords } from './support/records.js';

// A worker stopped while its robots.txt fetch hangs must not wait for that
// fetch: it cuts it, gives the job back with no attempt used, and exits
// within its grace period; the next worker fetches robots.txt afresh and
// crawls the page.
const HOST = '127.0.0.133';
const GRACE_MS = 2_000;
// From SIGTERM to exit: the grace period, then closing the worker's
// connections, on a loaded machine. Far below the 60 s a robots.txt fetch
// is given (and the 120 s the request timeouts below allow it).
const EXIT_BOUND_MS = GRACE_MS + 18_000;

let redis: TestRedis;
let server: Server;
let origin: string;
let robotsAnswers = false;
let robotsRequests = 0;
let robotsClosedUnanswered = 0;

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    if (request.url === '/robots.txt') {
      robotsRequests += 1;
      if (robotsAnswers) {
        response.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
        return;
      }
      // Never answers: only the client can end this request.
      response.on('close', () => (robotsClosedUnanswered += 1));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>page</title></head><body>page</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  origin = `http://${HOST}:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

describe('a worker stopping while robots.txt hangs', () => {
  it('cuts the robots.txt fetch, exits within its grace period, and the job is crawled by the next worker with no attempt used', { timeout: 180_000 }, async () => {
    const namespace = 'robots-stop';
    const env = cliEnv(redis.url);
    const page = `${origin}/page`;
    // The fleet's timeouts let a request hang for two minutes: only the stop can end it sooner.
    const enqueued = await runCli(
      ['enqueue', page, '--namespace', namespace, '--allow-private-network', '--request-timeout', '120s', '--response-timeout', '120s', '--lease-time', '121s'],
      { env },
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-robots-stop-'));
    const start = (index: number) => {
      const child = startCli(['worker', '--namespace', namespace, '--out', join(dir, `out-${index}.jsonl`), '--grace-period', `${GRACE_MS}ms`], { env });
      const log = { text: '' };
      child.stderr?.on('data', (chunk: Buffer) => (log.text += chunk.toString()));
      return { child, log };
    };

    const first = start(0);
    try {
      await waitFor(() => {
        if (first.child.exitCode !== null) throw new Error(`the worker exited early: ${first.log.text}`);
        return robotsRequests > 0 ? true : undefined;
      }, { timeoutMs: 120_000, what: 'the worker to request robots.txt' });
      const stoppedAt = performance.now();
      first.child.kill('SIGTERM');
      const code = await Promise.race([exited(first.child), new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), EXIT_BOUND_MS))]);
      expect(code, first.log.text).toBe(0);
      expect(performance.now() - stoppedAt).toBeLessThan(EXIT_BOUND_MS);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    }
    // The hanging request was cut by the worker, not by a timeout of ours.
    expect(robotsClosedUnanswered).toBe(1);
    expect(readRecords(join(dir, 'out-0.jsonl'))).toEqual([]);

    robotsAnswers = true;
    const second = start(1);
    try {
      const record = await waitFor(() => {
        if (second.child.exitCode !== null) throw new Error(`the worker exited early: ${second.log.text}`);
        return readRecords(join(dir, 'out-1.jsonl')).find((candidate) => candidate.url === page);
      }, { timeoutMs: 120_000, what: 'the next worker to crawl the page' });
      // The interrupted attempt was not counted, and robots.txt was fetched afresh: nothing was stored for the cut fetch.
      expect(record).toMatchObject({ status: 200, attempts: 1 });
      expect(robotsRequests).toBe(2);
      second.child.kill('SIGTERM');
      expect(await exited(second.child), second.log.text).toBe(0);
    } finally {
      if (second.child.exitCode === null && second.child.signalCode === null) second.child.kill('SIGKILL');
    }
  });
});
