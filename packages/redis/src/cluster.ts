import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/**
 * Every client crawlq passes around: one Redis server or a Redis Cluster.
 * A crawl's keys share one hash tag (see namespace-keys.ts), so on a cluster
 * every multi-key command and Lua script of a crawl lands in one slot.
 */
export type RedisClient = Redis | Cluster;

/**
 * How crawlq knows a URL names a cluster: it asks. `REDIS_URL` (or
 * `--redis-url`) may name any one master; after connecting, `INFO cluster`
 * says `cluster_enabled:1` and crawlq switches to ioredis' Cluster client,
 * which finds the other masters itself (CLUSTER SLOTS). Auto-detection, not a
 * separate option, because the same URL must mean the same Redis to every
 * process of a fleet, and a user who points crawlq at a cluster has already
 * said so; a single-node client on a cluster would fail later, with MOVED
 * errors, on whichever key happens to live elsewhere.
 *
 * The answer is kept per URL for the life of the process: connections opened
 * later from the same URL (BullMQ's queues and workers, the dead-letter
 * store, alerts) open the same kind of client. `connectRedis` asks first; a
 * component that opens BullMQ connections before it (the dashboard) calls
 * {@link detectRedisCluster} itself.
 */
const clusterByUrl = new Map<string, boolean>();

/** One more node of a cluster (`--redis-seeds`). */
export interface ClusterSeed {
  readonly host: string;
  readonly port: number;
}

/**
 * More nodes of the cluster a URL names, per URL (`--redis-seeds`). A URL
 * names one node; if that node is down when a process starts (a master that
 * failed over for good, a machine being replaced), the process would not
 * start at all. With seeds, whether the URL names a cluster is asked of each
 * in turn, and every Cluster client opened from the URL is seeded with all of
 * them, so it finds the slots from whichever answers.
 */
const seedsByUrl = new Map<string, readonly ClusterSeed[]>();

/** Registers `--redis-seeds` for `url`, for this process's life; `host:port` each. */
export function registerClusterSeeds(url: string, seeds: readonly string[]): void {
  if (seeds.length > 0) seedsByUrl.set(url, seeds.map(parseSeed));
}

function parseSeed(text: string): ClusterSeed {
  const colon = text.lastIndexOf(':');
  const host = text.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(text.slice(colon + 1));
  if (colon <= 0 || host === '' || !Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError(`not host:port: ${text}`);
  return { host, port };
}

/** True when the URL was found to name a cluster node (see {@link detectRedisCluster}); false when unknown or not. */
export function isKnownCluster(url: string): boolean {
  return clusterByUrl.get(url) === true;
}

/**
 * Asks the server at `url` whether it runs in cluster mode, once per URL and
 * process. A server that cannot be reached, or that refuses `INFO`, is taken
 * as a single node (and not remembered): whoever connects next reports it.
 */
export async function detectRedisCluster(url: string): Promise<boolean> {
  const known = clusterByUrl.get(url);
  if (known !== undefined) return known;
  // The URL's own node first, then each seed: the first that answers decides.
  for (const node of [withoutDatabase(url), ...(seedsByUrl.get(url) ?? []).map((seed) => urlAt(url, seed))]) {
    const cluster = await probeClusterMode(node);
    if (cluster === 'unreachable') continue;
    if (cluster !== undefined) clusterByUrl.set(url, cluster);
    return cluster ?? false;
  }
  return false;
}

/** One node asked: true for a cluster node, false for a single one, undefined when INFO is refused, 'unreachable' when it does not answer. */
async function probeClusterMode(url: string): Promise<boolean | undefined | 'unreachable'> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 5_000,
    connectionName: `crawlq:${process.pid}:cluster-check`,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
  } catch {
    probe.disconnect();
    return 'unreachable';
  }
  try {
    return await isClusterNode(probe);
  } finally {
    probe.disconnect();
  }
}

/** True when `--redis-seeds` were given for `url`. */
export function hasClusterSeeds(url: string): boolean {
  return seedsByUrl.has(url);
}

/** `url` with a seed's host and port, and no database: the same credentials and TLS. */
function urlAt(url: string, seed: ClusterSeed): string {
  const parsed = new URL(withoutDatabase(url));
  parsed.hostname = seed.host.includes(':') ? `[${seed.host}]` : seed.host;
  parsed.port = String(seed.port);
  return parsed.toString();
}

/** `INFO cluster` of one node: true for `cluster_enabled:1`; undefined when INFO is refused (renamed or disabled on managed Redis). */
export async function isClusterNode(redis: Redis): Promise<boolean | undefined> {
  try {
    return /^cluster_enabled:1\s*$/m.test(await redis.info('cluster'));
  } catch {
    return undefined;
  }
}

/** Remembers what {@link connectRedis} learned on its own connection. */
export function rememberTopology(url: string, cluster: boolean): void {
  clusterByUrl.set(url, cluster);
}

/**
 * A Cluster client seeded with the URL's host and its `--redis-seeds`:
 * credentials and TLS apply to every node. Role options (see
 * `redisOptionsFor`) split as ioredis wants them: the offline queue and the
 * reconnect policy belong to the cluster, the per-command retry limit and
 * names to each node connection.
 */
export function openCluster(url: string, options: RedisOptions = {}): Cluster {
  const parsed = new URL(url);
  const seed = { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port: parsed.port === '' ? 6379 : Number(parsed.port) };
  // Auto-pipelining stays with single nodes: the cluster client's own redirections and failovers are what its tests prove.
  const { enableOfflineQueue, retryStrategy, enableReadyCheck, lazyConnect, enableAutoPipelining: _single, ...nodeOptions } = options;
  const auth: RedisOptions = {
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...auth, ...nodeOptions },
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    // Same schedule as a single node's reconnects; null gives up, as there.
    clusterRetryStrategy: retryStrategy === undefined ? (times) => Math.min(100 * times, 2_000) : retryStrategy === null ? null : (times) => retryStrategy(times),
    // A restarting master refuses connections, then answers LOADING, then
    // serves again; meanwhile its peers answer MOVED (to it) or CLUSTERDOWN.
    // Each such answer spends one redirection and waits 300 ms.
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 300,
    retryDelayOnFailover: 300,
    maxRedirections: redirectionsFor(nodeOptions.maxRetriesPerRequest),
  };
  return new Cluster([seed, ...(seedsByUrl.get(url) ?? [])], clusterOptions);
}

/**
 * How long a command may chase a master that is away, in the spirit of the
 * role's `maxRetriesPerRequest` on a single node: unbounded for a role that
 * rides out an outage (null: workers, the coordinator, BullMQ's blocking
 * connections), about half a minute for ioredis' default (as 20 reconnects
 * take), ioredis' 16 (about 5 s) for a role that fails fast.
 */
function redirectionsFor(maxRetriesPerRequest: number | null | undefined): number {
  if (maxRetriesPerRequest === null) return Number.MAX_SAFE_INTEGER;
  return maxRetriesPerRequest === undefined ? 100 : 16;
}

/** The URL without a database path or `?db=` (cluster nodes refuse SELECT; the probe only asks INFO). */
function withoutDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.pathname = '';
    parsed.searchParams.delete('db');
    return parsed.toString();
  } catch {
    return url;
  }
}
