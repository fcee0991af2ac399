import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { launch } from './redis-server.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

/** One master of a {@link TestRedisCluster}. */
export interface TestClusterNode {
  readonly port: number;
  /** `redis://127.0.0.1:port`: a URL crawlq can be pointed at (any master is a seed). */
  readonly url: string;
  /** True between `halt` and `start`. */
  readonly halted: boolean;
}

/** A private 3-master Redis Cluster (by default without replicas) started for one test file; never the shared 6379. */
export interface TestRedisCluster extends AsyncDisposable {
  /** The first master's URL: where crawlq is pointed; it finds the other masters itself. */
  readonly url: string;
  /** Every node: the three masters first, then their replicas (if any) as they were made. */
  readonly nodes: readonly TestClusterNode[];
  /** A fresh cluster client; closed by `stop()`. */
  client(): Cluster;
  /** A plain client of one node (for per-node commands such as INFO, DBSIZE); closed by `stop()`. */
  nodeClient(node: TestClusterNode): Redis;
  /** The master that serves the slot of `key` (a `{tag}` counts as Redis Cluster counts it). */
  masterOf(key: string): Promise<TestClusterNode>;
  /**
   * Stops one master, keeping its port and directory for `start(node)`:
   * SIGTERM as an operator's restart would, SIGKILL as a crash would (with
   * `appendfsync always` every acknowledged write is in the append-only file
   * either way).
   * @default signal 'SIGTERM'
   */
  halt(node: TestClusterNode, signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts a halted master again on its port and directory, and waits until every master reports `cluster_state:ok`. */
  start(node: TestClusterNode): Promise<void>;
  /**
   * Waits until every running node reports `cluster_state:ok` and all 16384
   * slots served, and every running replica has finished its sync with its
   * master (`master_link_status:up`).
   */
  waitUntilHealthy(): Promise<void>;
  /** The node's redis-server log (replication, failure detection, elections), for a failing test's message. */
  log(node: TestClusterNode): Promise<string>;
  /** Kills every master and removes their directories. */
  stop(): Promise<void>;
}

export interface TestRedisClusterOptions {
  /**
   * How long a master may be silent before the others mark it failed. A
   * master halted for less stays "ok" for the others; with no replicas a
   * failed master only takes its slots offline until it returns.
   * @default 5000
   */
  readonly nodeTimeoutMs?: number;
  /**
   * Replicas per master. With one, `redis-cli --cluster create` makes the
   * first three nodes masters and the other three their replicas; a master
   * away past `nodeTimeoutMs` is then replaced by its replica. The cluster is
   * handed over only once every replica has synced: a replica that never
   * had its master's data refuses to stand in for it (and rightly, it would
   * come up empty), so a master killed before that sync is never replaced.
   * @default 0
   */
  readonly replicas?: 0 | 1;
}

const LOG_FILE = 'redis.log';

/** Generous: a CPU hog beside the tests slows the gossip that forms the cluster. */
const CLUSTER_READY_TIMEOUT_MS = 90_000;

interface NodeState {
  port: number;
  url: string;
  halted: boolean;
  child: ChildProcess;
  readonly args: readonly string[];
  readonly dir: string;
}

/**
 * Three `redis-server --cluster-enabled yes` masters on free ports, each with
 * its own directory and append-only file (`appendfsync always`, so a halted
 * master comes back with every write), joined by `redis-cli --cluster create`.
 */
export async function startTestRedisCluster(options: TestRedisClusterOptions = {}): Promise<TestRedisCluster> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 5_000;
  const replicas = options.replicas ?? 0;
  const states: NodeState[] = [];
  const clients: (Redis | Cluster)[] = [];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      clients.forEach((client) => client.disconnect());
      await Promise.all(states.map((state) => kill(state.child, 'SIGKILL')));
      await Promise.all(states.map((state) => rm(state.dir, { recursive: true, force: true })));
    })());
  try {
    for (let index = 0; index < 3 * (1 + replicas); index += 1) states.push(await startNode(nodeTimeoutMs));
    const addresses = states.map((state) => `127.0.0.1:${state.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: CLUSTER_READY_TIMEOUT_MS });
    await waitUntilHealthy(states);
  } catch (error) {
    await stop();
    throw error;
  }
  const nodes: TestClusterNode[] = states;
  const [seed] = states;
  if (seed === undefined) throw new Error('no master started');
  const stateOf = (node: TestClusterNode): NodeState => {
    const state = states.find((candidate) => candidate.port === node.port);
    if (state === undefined) throw new Error(`no master on port ${node.port} in this cluster`);
    return state;
  };
  const nodeClient = (node: TestClusterNode): Redis => {
    const client = new Redis(node.port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  return {
    url: seed.url,
    nodes,
    client() {
      const client = new Cluster(states.map((state) => ({ host: '127.0.0.1', port: state.port })), { redisOptions: { maxRetriesPerRequest: null } });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    nodeClient,
    async masterOf(key) {
      const asker = states.find((state) => !state.halted);
      if (asker === undefined) throw new Error('every master is halted');
      const probe = nodeClient(asker);
      try {
        const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
        const owner = ranges.find(([first, last]) => slot >= first && slot <= last);
        const state = owner === undefined ? undefined : states.find((candidate) => candidate.port === owner[2][1]);
        if (state === undefined) throw new Error(`no master serves slot ${slot} of ${key}`);
        return state;
      } finally {
        probe.disconnect();
      }
    },
    async halt(node, signal = 'SIGTERM') {
      const state = stateOf(node);
      state.halted = true;
      await kill(state.child, signal);
    },
    async start(node) {
      const state = stateOf(node);
      if (!state.halted) throw new Error(`the master on port ${state.port} is still running`);
      state.child = await launch(state.args, state.port);
      state.halted = false;
      await waitUntilHealthy(states);
    },
    waitUntilHealthy: () => waitUntilHealthy(states),
    log: (node) => readFile(join(stateOf(node).dir, LOG_FILE), 'utf8').catch((error: unknown) => `no log of :${node.port}: ${String(error)}`),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** A master with its data port and cluster-bus port both free; a port taken between probing and binding is retried. */
async function startNode(nodeTimeoutMs: number): Promise<NodeState> {
  const dir = await mkdtemp(join(tmpdir(), 'crawlq-test-cluster-'));
  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    const busPort = await freePort();
    const args = [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--cluster-enabled', 'yes',
      // Redis 7 takes the bus port as a setting: no need for port + 10000 to be free.
      '--cluster-port', String(busPort),
      '--cluster-config-file', 'nodes.conf',
      '--cluster-node-timeout', String(nodeTimeoutMs),
      '--save', '',
      '--appendonly', 'yes',
      '--appendfsync', 'always',
      '--dir', dir,
      '--maxmemory-policy', 'noeviction',
      // A replica's first sync starts at once instead of after Redis' 5 s wait for more replicas.
      '--repl-diskless-sync-delay', '0',
      // A synced replica always stands for election, however long a loaded machine kept its
      // link quiet before the kill (Redis' default refuses after node timeout x 10 + 10 s).
      '--cluster-replica-validity-factor', '0',
      '--loglevel', 'notice',
      '--logfile', LOG_FILE,
    ];
    try {
      const child = await launch(args, port);
      return { port, url: `redis://127.0.0.1:${port}`, halted: false, child, args, dir };
    } catch (error) {
      if (port === busPort || attempt < 4) continue;
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }
}

/**
 * Polls every running node for `cluster_state:ok` and full slot coverage, and
 * every running replica for a finished sync: a master killed while its
 * replica still waits for its first copy is never failed over.
 */
async function waitUntilHealthy(states: readonly NodeState[]): Promise<void> {
  await waitFor(
    async () => {
      for (const state of states) {
        if (state.halted) continue;
        const probe = new Redis(state.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          const info = String(await probe.call('CLUSTER', 'INFO'));
          if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false;
          const replication = String(await probe.call('INFO', 'replication'));
          if (replication.includes('role:slave') && (!replication.includes('master_link_status:up') || !replication.includes('master_sync_in_progress:0'))) return false;
        } catch {
          return false;
        } finally {
          probe.disconnect();
        }
      }
      return true;
    },
    { what: 'cluster_state:ok on every node and every replica in sync', timeoutMs: CLUSTER_READY_TIMEOUT_MS, intervalMs: 100 },
  );
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
