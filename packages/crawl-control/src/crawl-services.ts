import { adoptDefinition, canonicalJson, type CrawlDefinition, type CrawlqConfig } from '@crawlq/config';
import { Frontier, type FrontierSettings } from '@crawlq/frontier';
import { createShardLimiters, createShardedGroupLimiter, type GroupLimiter } from '@crawlq/group-limiter';
import { openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { connectRedis, gateKeyPrefix, queuePrefix, shardNamespaces, shardOfGroup, type RedisClient } from '@crawlq/redis';
import { DefinitionStore } from './definition-store.js';
import { jobPolicyFrom } from './settings/job-policy.js';

/**
 * The Redis-backed parts every crawlq command shares: one connection for our
 * own scripts, the crawl queue, the group limiter and the frontier. The number
 * of connections is fixed, however many groups the crawl has.
 */
export interface CrawlServices {
  /** The configuration in force: this process's own settings with the fleet's crawl definition laid over them once adopted. */
  readonly config: CrawlqConfig;
  /** The crawl definition this process follows (null until it joined or published one). */
  readonly definition: CrawlDefinition | null;
  readonly redisUrl: string;
  readonly redis: RedisClient;
  /** The crawl queue of the first shard (the only one of a crawl of one shard). */
  readonly queue: CrawlQueue;
  /** Every shard's crawl queue, in shard order (see `shardNamespaces` in @crawlq/redis); one for a crawl of one shard. */
  readonly queues: readonly CrawlQueue[];
  /** Every group's limiter, whatever its shard. */
  readonly limiter: GroupLimiter;
  /** Rebuilt when an adopted definition changes the frontier's settings: read it per use, do not keep it. */
  readonly frontier: Frontier;
  readonly definitions: DefinitionStore;
  /** Follows `definition` from now on: `config` and `frontier` reflect it. */
  adopt(definition: CrawlDefinition): void;
  close(): Promise<void>;
  /**
   * Drops the connections at once: for a Redis that is gone, where `close()`
   * would wait for it to come back. Commands still waiting never settle.
   */
  disconnect(): Promise<void>;
}

/**
 * What reading and steering a running crawl needs (status, group list, pause,
 * resume): `CrawlServices` has it, and so does `openFleetAdmin` without a
 * crawl definition or frontier.
 */
export type FleetAdminServices = Pick<CrawlServices, 'redis' | 'queues' | 'limiter'> & { readonly config: Pick<CrawlqConfig, 'namespace'> };

export function frontierSettingsFrom(config: CrawlqConfig): FrontierSettings {
  return {
    scope: config.scope,
    include: config.include,
    exclude: config.exclude,
    maxDepth: config.maxDepth,
    maxPages: config.maxPages,
    maxPagesPerGroup: config.maxPagesPerGroup,
    groupBy: config.groupBy,
    groupRules: config.groupRules,
    sortQuery: config.sortQuery,
    jobPolicy: jobPolicyFrom(config),
    expectedUrls: config.expectedUrls,
    seenSet:
      config.seenSet === 'bloom'
        ? { mode: 'bloom', expectedUrls: config.expectedUrls, falsePositiveRate: config.falsePositiveRate }
        : { mode: 'exact' },
  };
}

/**
 * A key in each slot the crawl works in (its own, and each shard's), read per
 * probe: the outage watch asks each of their masters, so a shard's master
 * away counts against --redis-outage-limit like the crawl's own.
 */
export function crawlSlotKeys(services: Pick<CrawlServices, 'config'>): () => readonly string[] {
  return () => {
    const { namespace, shards } = services.config;
    return shards > 1 ? [queuePrefix(namespace), ...shardNamespaces(namespace, shards).map(queuePrefix)] : [queuePrefix(namespace)];
  };
}

/** A crawl's queues and group limiter over its shards: what depends on how many there are. */
export interface ShardedParts {
  readonly queues: readonly CrawlQueue[];
  /** Shard i's crawl queue. */
  queueAt(index: number): CrawlQueue;
  readonly limiter: GroupLimiter;
  /** Shard i's own limiter: a shard's release step runs its scripts in the shard's slot. */
  limiterAt(index: number): GroupLimiter;
  close(): Promise<void>;
}

/**
 * Opens one crawl queue and one group limiter per shard. A crawl of one shard
 * gets exactly what it always had: the namespace's queue and gate.
 */
export function openShardedParts(redis: RedisClient, namespaces: readonly string[], openQueue: (namespace: string) => CrawlQueue): ShardedParts {
  const queues = namespaces.map(openQueue);
  const shardLimiters = createShardLimiters(redis, namespaces.map(gateKeyPrefix));
  const shardOf = (group: string): number => shardOfGroup(group, namespaces.length);
  const [only] = shardLimiters;
  return {
    queues,
    queueAt(index) {
      const queue = queues[index];
      if (queue === undefined) throw new RangeError(`no shard ${index} in a crawl of ${queues.length}`);
      return queue;
    },
    limiterAt(index) {
      const limiter = shardLimiters[index];
      if (limiter === undefined) throw new RangeError(`no shard ${index} in a crawl of ${shardLimiters.length}`);
      return limiter;
    },
    limiter: shardLimiters.length === 1 && only ? only : createShardedGroupLimiter(shardLimiters, shardOf),
    async close() {
      // What the limiters' releases left to write (hold times, requests sent) goes before the connection does.
      await Promise.all(shardLimiters.map((limiter) => limiter.flush().catch(() => undefined)));
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
}

export interface CrawlServiceOptions {
  /** Names the Redis connections (CLIENT LIST shows who is who). */
  readonly role: 'worker' | 'coordinator' | 'producer';
  /** Replaces the Redis-backed group gate (the benchmark's gate-off baseline); production never sets it. */
  readonly limiter?: GroupLimiter;
}

export async function openCrawlServices(config: CrawlqConfig, redisUrl: string, options: CrawlServiceOptions): Promise<CrawlServices> {
  const { role } = options;
  // A worker's jobs share this client for every gate and frontier call (see ConnectOptions.autoPipelining).
  const redis = await connectRedis(redisUrl, { role, name: `${role}-state`, autoPipelining: role === 'worker' });
  // The coordinator's queue reads ride out a Redis restart like its own connection.
  const openQueue = (namespace: string) => openCrawlQueue(role === 'coordinator' ? { url: redisUrl, maxRetriesPerRequest: null } : { url: redisUrl }, namespace);
  // An outage rejects our commands and shows as the Worker's 'error' event;
  // without a listener ioredis would print every reconnect failure to stderr
  // outside the log format (openCrawlQueue gives the queue one already).
  redis.on('error', () => undefined);
  // Rebuilt once if the fleet's definition has another shard count than this process was given (it is fixed for the crawl).
  let parts = openShardedParts(redis, shardNamespaces(config.namespace, config.shards), openQueue);
  const retired: ShardedParts[] = [];
  // A replaced gate (the benchmark's) still publishes the limit policy to
  // Redis: the release step paces by it, and without it every group would be
  // released at the default policy's pace.
  const limiterOf = (sharded: ShardedParts): GroupLimiter =>
    options.limiter
      ? { ...options.limiter, setPolicy: (policy) => sharded.limiter.setPolicy(policy), getPolicy: () => sharded.limiter.getPolicy() }
      : sharded.limiter;
  let limiter = limiterOf(parts);
  let current = config;
  // Releases are paced by the Redis-backed limiter even when the gate is replaced (the benchmark's gate-off baseline).
  const openFrontier = (settings: FrontierSettings) => {
    const shards = shardNamespaces(config.namespace, current.shards).map((namespace, i) => ({
      namespace,
      queue: parts.queueAt(i),
      pacer: parts.limiterAt(i),
    }));
    const [first] = shards;
    if (first === undefined) throw new RangeError('a crawl has at least one shard');
    return new Frontier({ redis, queue: first.queue, pacer: first.pacer, namespace: config.namespace, settings, ...(shards.length > 1 ? { shards } : {}) });
  };
  let settings = frontierSettingsFrom(config);
  let frontier = openFrontier(settings);
  let definition: CrawlDefinition | null = null;
  return {
    get config() {
      return current;
    },
    get definition() {
      return definition;
    },
    get frontier() {
      return frontier;
    },
    redisUrl,
    redis,
    get queue() {
      return parts.queueAt(0);
    },
    get queues() {
      return parts.queues;
    },
    get limiter() {
      return limiter;
    },
    definitions: new DefinitionStore(redis, config.namespace),
    adopt(next) {
      definition = next;
      const shardsBefore = current.shards;
      current = adoptDefinition(config, next.values);
      const nextSettings = frontierSettingsFrom(current);
      if (current.shards !== shardsBefore) {
        // Before any job is taken (a process joins the definition first): the old parts were never used for work.
        retired.push(parts);
        parts = openShardedParts(redis, shardNamespaces(config.namespace, current.shards), openQueue);
        limiter = limiterOf(parts);
        settings = nextSettings;
        frontier = openFrontier(settings);
      } else if (canonicalJson(nextSettings) !== canonicalJson(settings)) {
        // A new Frontier only when its settings changed: it caches the scope filter.
        settings = nextSettings;
        frontier = openFrontier(settings);
      }
    },
    async close() {
      await Promise.all([parts, ...retired].map((sharded) => sharded.close()));
      await redis.quit().catch(() => redis.disconnect());
    },
    async disconnect() {
      redis.disconnect();
      // Not the queue's own disconnect(): it waits for an 'end' that a reconnecting client never emits.
      for (const queue of [parts, ...retired].flatMap((sharded) => sharded.queues)) (await queue.backend.client).disconnect();
    },
  };
}
