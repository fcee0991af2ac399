import { OPTION_TABLE, type CrawlqConfig, type OptionName } from '@crawlq/config';
import { Frontier, type FrontierSettings } from '@crawlq/frontier';
import { createGroupLimiter, type GroupLimiter } from '@crawlq/group-limiter';
import { openCrawlQueue, stateKeyPrefix, type CrawlQueue } from '@crawlq/queue';
import { connectRedis } from '@crawlq/redis';
import type { Redis } from 'ioredis';
import { PLAN_BATCH_WINDOW_MS } from './group-gate.js';
import { limitPolicyFrom } from './limit-policy.js';

/**
 * The Redis-backed parts every crawlq command shares: one connection for our
 * own scripts, the crawl queue, the group limiter and the frontier. The number
 * of connections is fixed, however many groups the crawl has.
 */
export interface CrawlServices {
  readonly config: CrawlqConfig;
  readonly redisUrl: string;
  readonly redis: Redis;
  readonly queue: CrawlQueue;
  readonly limiter: GroupLimiter;
  readonly frontier: Frontier;
  close(): Promise<void>;
}

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
    jobPolicy: { attempts: config.attempts, backoffMs: config.backoff },
    seenSet:
      config.seenSet === 'bloom'
        ? { mode: 'bloom', expectedUrls: config.expectedUrls, falsePositiveRate: config.falsePositiveRate }
        : { mode: 'exact' },
  };
}

export interface CrawlServiceOptions {
  /** Names the Redis connections (CLIENT LIST shows who is who). */
  readonly role: 'worker' | 'producer';
  /** Replaces the Redis-backed group gate (the benchmark's gate-off baseline); production never sets it. */
  readonly limiter?: GroupLimiter;
}

export async function openCrawlServices(config: CrawlqConfig, redisUrl: string, options: CrawlServiceOptions): Promise<CrawlServices> {
  const { role } = options;
  const redis = await connectRedis(redisUrl, { role, name: `${role}-state` });
  const queue = openCrawlQueue({ url: redisUrl }, config.namespace);
  // An outage rejects our commands and shows as the Worker's 'error' event;
  // without a listener ioredis would print every reconnect failure to stderr
  // outside the log format.
  redis.on('error', () => undefined);
  queue.on('error', () => undefined);
  const limiter = options.limiter ?? createGroupLimiter({ redis, prefix: `${stateKeyPrefix(config.namespace)}:gate` });
  // Planned jobs wake in batches; the gate's short in-process wait spaces them.
  const planner = { plan: (groups: readonly string[]) => limiter.plan(groups, { batchWindowMs: PLAN_BATCH_WINDOW_MS }) };
  const frontier = new Frontier({ redis, queue, planner, namespace: config.namespace, settings: frontierSettingsFrom(config) });
  return {
    config,
    redisUrl,
    redis,
    queue,
    limiter,
    frontier,
    async close() {
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** Options that make up the fleet-wide politeness policy. */
const LIMIT_OPTIONS: readonly OptionName[] = ['rate', 'burst', 'domainConcurrency', 'limitRules', 'safetyMargin', 'leaseTime', 'maxPause', 'requestTimeout', 'maxCrawlDelay'];

/**
 * Publishes this process's limits as the fleet's when it was given any limit
 * option, or when the fleet has none yet; a process started with default
 * limits adopts the fleet's instead of resetting them. Returns a warning when
 * it replaced different limits, so two workers never enforce different limits
 * for one group without saying so.
 */
export async function publishLimitPolicy(services: CrawlServices): Promise<string | undefined> {
  const { config, limiter } = services;
  const given = config.explicit.filter((name) => LIMIT_OPTIONS.includes(name));
  if (given.length === 0 && (await limiter.getPolicy()) !== null) return undefined;
  const { changed, previous } = await limiter.setPolicy(limitPolicyFrom(config));
  return changed && previous !== null
    ? `the fleet-wide politeness limits changed (this process was given ${given.map((name) => OPTION_TABLE[name].flag ?? name).join(', ')}); every worker follows the new ones now`
    : undefined;
}
