import { adoptDefinition, canonicalJson, type CrawlDefinition, type CrawlqConfig } from '@crawlq/config';
import { Frontier, type FrontierSettings } from '@crawlq/frontier';
import { createGroupLimiter, type GroupLimiter } from '@crawlq/group-limiter';
import { openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { connectRedis, stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import { DefinitionStore } from './definition-store.js';
import { jobPolicyFrom } from './job-policy.js';

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
  readonly queue: CrawlQueue;
  readonly limiter: GroupLimiter;
  /** Rebuilt when an adopted definition changes the frontier's settings: read it per use, do not keep it. */
  readonly frontier: Frontier;
  readonly definitions: DefinitionStore;
  /** Follows `definition` from now on: `config` and `frontier` reflect it. */
  adopt(definition: CrawlDefinition): void;
  close(): Promise<void>;
  /**
   * Drops the connections at once: for a Redis that is gone, where `close()`
   * would wait for it to come back (#10). Commands still waiting never settle.
   */
  disconnect(): Promise<void>;
}

/**
 * What reading and steering a running crawl needs (status, group list, pause,
 * resume): `CrawlServices` has it, and so does `openFleetAdmin` without a
 * crawl definition or frontier.
 */
export type FleetAdminServices = Pick<CrawlServices, 'redis' | 'queue' | 'limiter'> & { readonly config: Pick<CrawlqConfig, 'namespace'> };

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
    seenSet:
      config.seenSet === 'bloom'
        ? { mode: 'bloom', expectedUrls: config.expectedUrls, falsePositiveRate: config.falsePositiveRate }
        : { mode: 'exact' },
  };
}

/** Key prefix of the namespace's group limiter (the politeness gate every worker shares). */
export function gatePrefix(namespace: string): string {
  return `${stateKeyPrefix(namespace)}:gate`;
}

export interface CrawlServiceOptions {
  /** Names the Redis connections (CLIENT LIST shows who is who). */
  readonly role: 'worker' | 'coordinator' | 'producer';
  /** Replaces the Redis-backed group gate (the benchmark's gate-off baseline); production never sets it. */
  readonly limiter?: GroupLimiter;
}

export async function openCrawlServices(config: CrawlqConfig, redisUrl: string, options: CrawlServiceOptions): Promise<CrawlServices> {
  const { role } = options;
  const redis = await connectRedis(redisUrl, { role, name: `${role}-state` });
  // The coordinator's queue reads ride out a Redis restart like its own connection.
  const queue = openCrawlQueue(role === 'coordinator' ? { url: redisUrl, maxRetriesPerRequest: null } : { url: redisUrl }, config.namespace);
  // An outage rejects our commands and shows as the Worker's 'error' event;
  // without a listener ioredis would print every reconnect failure to stderr
  // outside the log format (openCrawlQueue gives the queue one already).
  redis.on('error', () => undefined);
  const sharedLimiter = createGroupLimiter({ redis, prefix: gatePrefix(config.namespace) });
  // A replaced gate (the benchmark's) still publishes the limit policy to
  // Redis: the release step paces by it, and without it every group would be
  // released at the default policy's pace.
  const limiter: GroupLimiter = options.limiter
    ? { ...options.limiter, setPolicy: (policy) => sharedLimiter.setPolicy(policy), getPolicy: () => sharedLimiter.getPolicy() }
    : sharedLimiter;
  let current = config;
  // Releases are paced by the Redis-backed limiter even when the gate is replaced (the benchmark's gate-off baseline).
  const openFrontier = (settings: FrontierSettings) => new Frontier({ redis, queue, pacer: sharedLimiter, namespace: config.namespace, settings });
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
    queue,
    limiter,
    definitions: new DefinitionStore(redis, config.namespace),
    adopt(next) {
      definition = next;
      current = adoptDefinition(config, next.values);
      const nextSettings = frontierSettingsFrom(current);
      // A new Frontier only when its settings changed: it caches the scope filter.
      if (canonicalJson(nextSettings) !== canonicalJson(settings)) {
        settings = nextSettings;
        frontier = openFrontier(settings);
      }
    },
    async close() {
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
    async disconnect() {
      redis.disconnect();
      // Not the queue's own disconnect(): it waits for an 'end' that a reconnecting client never emits.
      (await queue.backend.client).disconnect();
    },
  };
}
