import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

/** A private redis-server started for one test file; never the shared 6379. */
export interface TestRedis extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  /** A fresh client; closed by `stop()`. */
  client(): Redis;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

export async function startTestRedis(): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'crawlq-test-redis-'));
  // A port can be taken between probing and binding; try a few times.
  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    try {
      return await launch(port, dir);
    } catch (error) {
      if (attempt >= 4) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
}

async function launch(port: number, dir: string): Promise<TestRedis> {
  const child = spawn(
    'redis-server',
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--dir', dir,
      '--maxmemory-policy', 'noeviction',
      '--loglevel', 'warning',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitForReady(child, port);
  const clients: Redis[] = [];
  const url = `redis://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  // Idempotent: tests may stop the server early and again in afterAll.
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      clients.forEach((client) => client.disconnect());
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    })());
  return {
    url,
    port,
    client() {
      const client = new Redis(url, { maxRetriesPerRequest: null });
      clients.push(client);
      return client;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

async function waitForReady(child: ChildProcess, port: number): Promise<void> {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`redis-server on port ${port} exited with ${child.exitCode}: ${output.trim()}`);
    }
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // Refused while the server starts: expected, retried below.
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch {
      probe.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not become ready: ${output.trim()}`);
}
