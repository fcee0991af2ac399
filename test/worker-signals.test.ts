import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { readRecords } from './support/records.js';

// the apps own process signals; the worker package only takes an AbortSignal.
const HOST = '127.0.0.132';
let redis: TestRedis;
let server: Server;
let origin: string;
/** The held response of /slow, once its request arrived. */
let held: ServerResponse | undefined;

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    if (request.url === '/slow') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.write('<html><head><title>slow</title></head>');
      held = response;
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  origin = `http://${HOST}:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  held?.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

describe('crawlq worker and signals', () => {
  it('the first signal begins a graceful stop; further SIGTERM and SIGINT do not cut it short: the job in flight finishes and is recorded', { timeout: 180_000 }, async () => {
    const namespace = 'signals';
    const env = cliEnv(redis.url);
    // The fleet's definition lets the page take its time; the worker follows it.
    const enqueued = await runCli(['enqueue', `${origin}/slow`, '--namespace', namespace, '--allow-private-network', '--request-timeout', '120s', '--lease-time', '120s'], { env });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const out = join(mkdtempSync(join(tmpdir(), 'crawlq-signals-')), 'out.jsonl');
    const worker = startCli(['worker', '--namespace', namespace, '--out', out, '--grace-period', '120s'], { env });
    let stderr = '';
    worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const heldByWorker = () => {
        if (worker.exitCode !== null) throw new Error(`the worker exited early: ${stderr}`);
        return held;
      };
      await waitFor(heldByWorker, { timeoutMs: 120_000, what: 'the worker to request /slow' });
      worker.kill('SIGTERM');
      await waitFor(() => (/SIGTERM: finishing in-flight jobs/.test(stderr) ? true : undefined), { timeoutMs: 60_000, what: 'the graceful stop to begin' });
      // A signal nobody listens to would kill the process before it could read the rest of the page.
      worker.kill('SIGINT');
      worker.kill('SIGTERM');
      held?.end('<body>done</body></html>');
      expect(await exited(worker), stderr).toBe(0);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    }
    expect(readRecords(out).map((record) => [record.url, record.status])).toEqual([[`${origin}/slow`, 200]]);
  });
});
