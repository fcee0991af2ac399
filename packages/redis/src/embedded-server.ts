import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { detectRedisCluster, registerClusterSeeds } from './cluster.js';
import { assertClusterDatabase, checkDatabase } from './database-check.js';
import { RedisNotInstalledError } from './errors.js';
import { redisServerArgs } from './server-settings.js';

/** A Redis this process may use, embedded or external. */
export interface RedisHandle {
  readonly url: string;
  /** True when crawlq started (or joined) a private redis-server under the state dir. */
  readonly embedded: boolean;
  /** The embedded server's log file (what to read when it died); undefined for a given URL. */
  readonly logFile?: string;
  /**
   * Lets go of the server: an embedded one is shut down (its data saved) when
   * no other crawlq process is connected to it.
   */
  release(): Promise<void>;
}

interface ServerRecord {
  readonly pid: number;
  readonly port: number;
}

/**
 * With a URL: checks that the server has its database (RedisDatabaseError
 * otherwise), asks whether it is a cluster node (every connection opened from
 * the URL later follows the answer, see cluster.ts) and uses it. Without: joins the private redis-server that another
 * crawlq process on this machine runs from the same state directory, or
 * starts one (append-only file on, `noeviction`), so `enqueue`, `worker` and
 * `crawl` run in separate terminals share one crawl and data survives restarts.
 */
export async function resolveRedis(options: { url?: string | undefined; seeds?: readonly string[] | undefined; stateDir: string }): Promise<RedisHandle> {
  if (options.url !== undefined) {
    registerClusterSeeds(options.url, options.seeds ?? []);
    await checkDatabase(options.url);
    if (await detectRedisCluster(options.url)) assertClusterDatabase(options.url);
    return { url: options.url, embedded: false, release: () => Promise.resolve() };
  }
  const dir = resolve(options.stateDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const record = await joinOrStart(dir);
  const url = `redis://127.0.0.1:${record.port}`;
  // A named connection for as long as the handle is held: the watchdog counts
  // this process as a user from the start, before it opens its own connections.
  const holder = new Redis({ port: record.port, host: '127.0.0.1', connectionName: `crawlq:${process.pid}:embedded-user`, maxRetriesPerRequest: null });
  holder.on('error', () => undefined); // Its only job is to be connected.
  return {
    url,
    embedded: true,
    logFile: serverLog(dir),
    release: async () => {
      holder.disconnect();
      await releaseEmbedded(dir, record);
    },
  };
}

async function joinOrStart(dir: string): Promise<ServerRecord> {
  const lockPath = join(dir, 'start.lock');
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const running = await runningServer(dir);
    if (running) return running;
    let lock: number | undefined;
    try {
      lock = openSync(lockPath, 'wx');
      writeFileSync(lock, String(Date.now()));
    } catch {
      // Another process is starting the server; a lock older than 15 s is stale.
      if (Date.now() - lockTime(lockPath) > 15_000) rmSync(lockPath, { force: true });
      await sleep(100);
      continue;
    }
    try {
      const again = await runningServer(dir);
      return again ?? (await startServer(dir));
    } finally {
      closeSync(lock);
      rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`timed out waiting for the embedded redis-server in ${dir}`);
}

function lockTime(path: string): number {
  try {
    return Number(readFileSync(path, 'utf8')) || Date.now();
  } catch {
    return Date.now();
  }
}

async function runningServer(dir: string): Promise<ServerRecord | undefined> {
  const recordPath = join(dir, 'server.json');
  if (!existsSync(recordPath)) return undefined;
  let record: ServerRecord;
  try {
    record = JSON.parse(readFileSync(recordPath, 'utf8')) as ServerRecord;
  } catch {
    return undefined;
  }
  return (await answersPing(record.port)) ? record : undefined;
}

async function startServer(dir: string): Promise<ServerRecord> {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error) throw new RedisNotInstalledError();
  const port = await freePort();
  // Detached: Ctrl-C in the terminal must reach crawlq first, so in-flight
  // jobs can finish against a live Redis; we shut the server down ourselves.
  const child = spawn(
    'redis-server',
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--dir', dir,
      '--appendonly', 'yes',
      '--appendfsync', 'everysec',
      '--save', '',
      ...redisServerArgs(),
      '--logfile', serverLog(dir),
    ],
    { detached: true, stdio: 'ignore' },
  );
  child.unref();
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await answersPing(port)) {
      const record = { pid: child.pid ?? 0, port };
      writeFileSync(join(dir, 'server.json'), JSON.stringify(record));
      startWatchdog(port, dir);
      return record;
    }
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  throw new Error(`the embedded redis-server did not start; see ${serverLog(dir)}`);
}

/**
 * `release()` shuts the server down when the last crawlq process lets go, but
 * a process killed with SIGKILL never calls it. So a tiny detached
 * watchdog (plain Node, no dependencies, started once per server) asks the
 * server every 2 s who is connected, and shuts it down once no `crawlq:`
 * client has been there for two checks in a row; it exits with the server.
 * Idle checks count only once a crawlq client was seen, or after a start-up
 * grace: on a loaded machine the process that started the server may take
 * longer than two checks to load its code and connect.
 */
function startWatchdog(port: number, dir: string): void {
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG_SOURCE, String(port), join(dir, 'server.json')], { detached: true, stdio: 'ignore' });
  watchdog.unref();
}

const WATCHDOG_SOURCE = `
const net = require('node:net');
const fs = require('node:fs');
const port = Number(process.argv[1]);
const recordPath = process.argv[2];
const CHECK_MS = 2000;
const STARTUP_GRACE_MS = 60000;
const started = Date.now();
let seen = false;
let idleChecks = 0;
function ask(command, onReply) {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  let answered = false;
  const answer = (reply) => { if (!answered) { answered = true; socket.destroy(); onReply(reply); } };
  socket.on('connect', () => socket.write(command + '\\r\\n'));
  socket.on('data', (chunk) => {
    data += chunk.toString('latin1');
    if (data.startsWith('-')) return answer({ error: true });
    const head = /^\\$(\\d+)\\r\\n/.exec(data);
    if (head && data.length >= head[0].length + Number(head[1]) + 2) answer({ text: data });
  });
  socket.on('error', () => answer(undefined));
  socket.on('close', () => answer(undefined));
  socket.setTimeout(5000, () => answer({ error: true }));
}
function check() {
  ask('CLIENT LIST', (reply) => {
    if (reply === undefined) process.exit(0); // The server is gone: nothing left to watch.
    const users = reply.error ? 1 : (reply.text.match(/ name=crawlq:/g) || []).length;
    if (users > 0) seen = true;
    idleChecks = users > 0 || (!seen && Date.now() - started < STARTUP_GRACE_MS) ? 0 : idleChecks + 1;
    if (idleChecks < 2) return setTimeout(check, CHECK_MS);
    ask('SHUTDOWN', () => {
      try { if (JSON.parse(fs.readFileSync(recordPath, 'utf8')).port === port) fs.rmSync(recordPath, { force: true }); } catch {}
      process.exit(0);
    });
  });
}
setTimeout(check, CHECK_MS);
`;

async function releaseEmbedded(dir: string, record: ServerRecord): Promise<void> {
  const redis = new Redis({ port: record.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const clients = String(await redis.client('LIST'));
    const others = clients
      .split('\n')
      .map((line) => /name=crawlq:(\d+):/.exec(line)?.[1])
      .filter((pid) => pid !== undefined && Number(pid) !== process.pid);
    if (others.length > 0) return; // Last one out turns off the lights.
    await redis.call('SHUTDOWN').catch(() => undefined); // The connection drops as it shuts down.
    rmSync(join(dir, 'server.json'), { force: true });
  } catch {
    // Already gone: nothing to release.
  } finally {
    redis.disconnect();
  }
}

function serverLog(dir: string): string {
  return join(dir, 'redis.log');
}

async function answersPing(port: number): Promise<boolean> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => undefined); // A refused probe is an answer, not an error.
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}
