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
  /**
   * Stops the server as an operator's restart would (SIGTERM: the append-only
   * file is flushed) and keeps its directory, for `start()`.
   */
  halt(): Promise<void>;
  /** Starts the server again on the same port and directory (after `halt()`). */
  start(): Promise<void>;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

export interface TestRedisOptions {
  /**
   * Persist every write to an append-only file (`appendfsync always`), so a
   * `halt()` and `start()` keep the data, as a production Redis with AOF does.
   * @default false
   */
  readonly appendOnly?: boolean;
}

export async function startTestRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'crawlq-test-redis-'));
  // A port can be taken between probing and binding; try a few times.
  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    try {
      const args = serverArgs(port, dir, options);
      return managed(await launch(args, port), { args, port, dir });
    } catch (error) {
      if (attempt >= 4) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
}

function serverArgs(port: number, dir: string, options: TestRedisOptions): string[] {
  return [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--save', '',
    ...(options.appendOnly === true ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    '--dir', dir,
    '--maxmemory-policy', 'noeviction',
    '--loglevel', 'warning',
  ];
}

function managed(first: ChildProcess, server: { readonly args: readonly string[]; readonly port: number; readonly dir: string }): TestRedis {
  const { args, port, dir } = server;
  let child = first;
  const clients: Redis[] = [];
  const url = `redis://127.0.0.1:${port}`;
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  let stopped: Promise<void> | undefined;
  // Idempotent: tests may stop the server early and again in afterAll.
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      clients.forEach((client) => client.disconnect());
      await halt('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    })());
  return {
    url,
    port,
    client() {
      const client = new Redis(url, { maxRetriesPerRequest: null });
      // Tests halt their server on purpose; a client's reconnect attempts are
      // expected then, and a failing command still rejects where it is awaited.
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    halt: () => halt('SIGTERM'),
    async start() {
      if (child.exitCode === null && child.signalCode === null) throw new Error(`redis-server on port ${port} is still running`);
      child = await launch(args, port);
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** Spawns redis-server with `args` and resolves once it answers PING on `port`. */
export async function launch(args: readonly string[], port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForReady(child, port);
  return child;
}

async function waitForReady(child: ChildProcess, port: number): Promise<void> {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Loading a large append-only file takes a while on a busy machine.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`redis-server on port ${port} exited with ${child.exitCode}: ${output.trim()}`);
    }
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // Refused while the server starts: expected, retried below.
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') {
        probe.disconnect();
        return;
      }
    } catch {
      // Not answering yet (or still loading its data): retried below.
    }
    probe.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not become ready: ${output.trim()}`);
}
