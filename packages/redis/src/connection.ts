import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { detectRedisCluster, hasClusterSeeds, isClusterNode, isKnownCluster, openCluster, rememberTopology, type RedisClient } from './cluster.js';
import { assertClusterDatabase, assertDatabase } from './database-check.js';
import { RedisUnavailableError } from './errors.js';

/*
 * Two ways to open a client, on purpose:
 * - `connectRedis(url, role)`: for the apps, which hold a URL. Options come
 *   from the role (retry policy, `maxRetriesPerRequest`), and it waits until
 *   Redis answers in the URL's database, so start-up fails with a clear error.
 * - `openRedisFrom(connection)`: for library objects (dead-letter store,
 *   alerts) that take the `connection` their caller also gives BullMQ. The
 *   caller's options are kept as given, and it connects lazily: failures
 *   surface as rejected commands, like BullMQ's own.
 * Both open a Cluster client where the URL names a Redis Cluster (see cluster.ts).
 */

/**
 * Workers block on Redis and must ride out reconnects (BullMQ requires
 * `maxRetriesPerRequest: null`); so must the `crawl` coordinator, which only
 * waits for the crawl to end and must not die while Redis restarts.
 * Producers and admin commands should fail fast instead of queueing commands
 * while Redis is down. A long-running server (the dashboard) fails its
 * commands fast like a producer but keeps reconnecting, so it outlives a
 * Redis restart.
 */
export type ConnectionRole = 'worker' | 'coordinator' | 'producer' | 'server';

export interface ConnectOptions {
  readonly role: ConnectionRole;
  /** Shows in CLIENT LIST; the embedded server counts `crawlq:` clients. */
  readonly name?: string;
  /**
   * Sends the commands issued in one turn of the event loop in one write
   * (ioredis' auto-pipelining). For a client that many concurrent tasks share,
   * as a worker's gate and frontier do: one write per turn instead of one per
   * command spares a busy process the CPU that made its paced starts late.
   * Single nodes only (a Redis Cluster client ignores it).
   */
  readonly autoPipelining?: boolean;
}

/** Options BullMQ and our own scripts need for one role. */
export function redisOptionsFor(options: ConnectOptions): RedisOptions {
  return { ...roleOptions(options), ...(options.autoPipelining === true ? { enableAutoPipelining: true } : {}) };
}

function roleOptions(options: ConnectOptions): RedisOptions {
  const name = `crawlq:${process.pid}:${options.name ?? options.role}`;
  const reconnect = (times: number): number => Math.min(100 * times, 2_000);
  if (options.role === 'server') return { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectionName: name, retryStrategy: reconnect };
  return options.role !== 'producer'
    ? { maxRetriesPerRequest: null, enableReadyCheck: true, connectionName: name, retryStrategy: reconnect }
    : { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectionName: name, retryStrategy: (times) => (times > 3 ? null : 200 * times) };
}

/**
 * Opens a connection and waits until Redis answers; rejects with a clear error
 * otherwise, or with RedisDatabaseError when the server lacks the URL's database
 * (a cluster has only database 0). On a cluster node it returns a Cluster
 * client seeded with that node, ready to serve every slot.
 */
export async function connectRedis(url: string, options: ConnectOptions): Promise<RedisClient> {
  const redis = new Redis(url, { ...redisOptionsFor(options), lazyConnect: true });
  // Connection errors reach callers as rejected commands (or as waits, for a
  // role that rides out an outage); without a listener ioredis would print
  // every failed reconnect as an "Unhandled error event".
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    // The URL's node is down: another node of its cluster (--redis-seeds) may answer for it.
    if (hasClusterSeeds(url) && (await detectRedisCluster(url))) {
      assertClusterDatabase(url);
      return connectCluster(url, options);
    }
    throw new RedisUnavailableError(url, { cause: error });
  }
  let cluster: boolean;
  try {
    await assertDatabase(redis, url);
    cluster = (await isClusterNode(redis)) === true;
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  rememberTopology(url, cluster);
  if (!cluster) return redis;
  redis.disconnect();
  return connectCluster(url, options);
}

async function connectCluster(url: string, options: ConnectOptions): Promise<Cluster> {
  const cluster = openCluster(url, { ...redisOptionsFor(options), lazyConnect: true });
  cluster.on('error', () => undefined); // as for a single node above
  try {
    await cluster.connect();
    await cluster.ping();
  } catch (error) {
    cluster.disconnect();
    throw new RedisUnavailableError(url, { cause: error });
  }
  return cluster;
}

/**
 * A `connection` as BullMQ takes it: options (with an optional `url`) or a
 * client instance. Only ioredis instances can be used beside BullMQ.
 */
export type RedisConnectionInput =
  | RedisClient
  | (RedisOptions & { readonly url?: string; readonly skipVersionCheck?: boolean })
  | { duplicate(...args: never[]): unknown };

/**
 * Our own ioredis client beside BullMQ's (BullMQ 6.7 wraps its client behind a
 * narrow interface), from the same `connection`. An ioredis instance is
 * duplicated, so closing ours leaves the caller's open. Options whose `url`
 * names a cluster (as `connectRedis` or `detectRedisCluster` found) open a
 * Cluster client.
 * @throws TypeError for a client that is not ioredis
 */
export function openRedisFrom(connection: RedisConnectionInput): RedisClient {
  if (connection instanceof Redis) return connection.duplicate();
  if (connection instanceof Cluster) return connection.duplicate();
  if ('duplicate' in connection && typeof connection.duplicate === 'function') {
    throw new TypeError('pass connection options or an ioredis Redis or Cluster instance (other clients are not supported)');
  }
  const { url, skipVersionCheck: _skip, ...rest } = connection as RedisOptions & { url?: string; skipVersionCheck?: boolean };
  const redis = url === undefined ? new Redis(rest) : isKnownCluster(url) ? openCluster(url, rest) : new Redis(url, rest);
  // Failures reach callers as rejected commands; the event would only be noise.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * For BullMQ: a Cluster client when `connection` is options whose `url` names
 * a cluster, else undefined (BullMQ opens single-node clients from options
 * itself, but only takes a cluster as an instance). The caller owns it: BullMQ
 * leaves a client it was given open when it closes.
 */
export function clusterClientFor(connection: RedisConnectionInput, overrides: RedisOptions = {}): Cluster | undefined {
  if (connection instanceof Redis || connection instanceof Cluster || 'duplicate' in connection) return undefined;
  const { url, skipVersionCheck: _skip, ...rest } = connection as RedisOptions & { url?: string; skipVersionCheck?: boolean };
  if (url === undefined || !isKnownCluster(url)) return undefined;
  const cluster = openCluster(url, { ...rest, ...overrides });
  cluster.on('error', () => undefined); // BullMQ listens for itself once it has it
  return cluster;
}

/**
 * BullMQ loses jobs silently if Redis evicts keys. Returns a warning to print
 * when the server (on a cluster: any master) is not configured with
 * `maxmemory-policy noeviction`.
 */
export async function checkEvictionPolicy(redis: RedisClient): Promise<string | undefined> {
  // CONFIG is per node: a cluster answers it from whichever node it picks.
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let policy: string | undefined;
    try {
      policy = ((await node.config('GET', 'maxmemory-policy')) as string[])[1];
    } catch {
      continue; // CONFIG may be disabled on managed Redis; nothing to check then.
    }
    if (policy !== undefined && policy !== 'noeviction') {
      const where = redis instanceof Cluster ? `Redis master ${node.options.host ?? ''}:${node.options.port ?? ''}` : 'Redis';
      return `${where} maxmemory-policy is "${policy}"; set it to "noeviction" or queued jobs can be evicted`;
    }
  }
  return undefined;
}
