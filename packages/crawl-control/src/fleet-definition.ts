import { hostname } from 'node:os';
import {
  adoptDefinition,
  definitionConflicts,
  definitionValuesFrom,
  formatOptionValue,
  mergeDefinition,
  optionLabel,
  type CrawlDefinition,
  type CrawlqConfig,
  type OptionName,
} from '@crawlq/config';
import { openCrawlQueue, type CrawlJobPolicy, type CrawlQueue } from '@crawlq/queue';
import { connectRedis, shardNamespaces, shardOfGroup } from '@crawlq/redis';
import { DefinitionConflictError } from './errors.js';
import type { CrawlServices } from './crawl-services.js';
import { DefinitionStore } from './definition-store.js';
import { jobPolicyFrom } from './settings/job-policy.js';
import { limitPolicyFrom } from './settings/limit-policy.js';

/** What a producer's publish did to the fleet's definition. */
export interface PublishedDefinition {
  readonly definition: CrawlDefinition;
  /** No definition existed: this process's whole fleet configuration became it. */
  readonly created: boolean;
  /** Options this process changed in an existing definition (empty when it only adopted). */
  readonly changed: readonly OptionName[];
  /** A human line for the log when an existing definition changed, else undefined. */
  readonly notice: string | undefined;
}

const MAX_WRITE_RACES = 10;

/** `enqueue --rate ... on host:1234`: who stored a version, for `config show`. */
export function definitionAuthor(command: string): string {
  return `${command} on ${hostname()}:${process.pid}`;
}

/**
 * The one publish path for whoever starts or steers a crawl (`crawl`,
 * `enqueue`, `config set`): lays the options this process was given over the
 * definition in force (or stores its whole fleet configuration when there is
 * none), bumps the version when anything changed, adopts the result and
 * derives the limit policy the group gate reads from it.
 * @throws ConfigError when a change touches an option fixed for the crawl's lifetime
 */
export async function publishCrawlDefinition(services: CrawlServices, author: string): Promise<PublishedDefinition> {
  const own = services.config;
  for (let race = 0; race < MAX_WRITE_RACES; race += 1) {
    const current = await services.definitions.read();
    const { values, changed } = mergeDefinition(current?.values ?? null, own);
    let definition = current;
    if (current === null || changed.length > 0) {
      definition = await services.definitions.write(values, current?.version ?? 0, author);
      if (definition === null) continue; // another writer came first: merge over theirs
    }
    if (definition === null) continue;
    services.adopt(definition);
    await syncLimitPolicy(services);
    const notice =
      current !== null && changed.length > 0
        ? `the fleet's crawl definition changed to version ${definition.version} (${changed
            .map((name) => `${optionLabel(name)} ${formatOptionValue(name, values[name])}, was ${formatOptionValue(name, current.values[name])}`)
            .join('; ')}); every worker follows it within seconds`
        : undefined;
    return { definition, created: current === null, changed, notice };
  }
  throw new Error(`the crawl definition kept changing under this process (${MAX_WRITE_RACES} tries); try again`);
}

/**
 * How a worker joins the fleet: it adopts the definition in force, refusing to
 * start if it was given a fleet option with another value; when there is none
 * yet, it stores its own (first writer wins, atomically).
 * @param cli how the operator runs crawlq, for the fix the refusal names (`crawlq`, `pnpm crawlq`)
 * @throws DefinitionConflictError naming the first conflicting option
 */
export async function joinCrawlDefinition(services: CrawlServices, author: string, cli?: string): Promise<CrawlDefinition> {
  const own = services.config;
  for (let race = 0; race < MAX_WRITE_RACES; race += 1) {
    const current = await services.definitions.read();
    if (current !== null) {
      const conflicts = definitionConflicts(own, current.values);
      if (conflicts.length > 0) throw new DefinitionConflictError(conflicts, current.version, { namespace: own.namespace, cli });
      services.adopt(current);
      await syncLimitPolicy(services);
      return current;
    }
    const created = await services.definitions.write(definitionValuesFrom(own), 0, author);
    if (created === null) continue; // another process published first: check against theirs
    services.adopt(created);
    await syncLimitPolicy(services);
    return created;
  }
  throw new Error(`the crawl definition kept changing under this process (${MAX_WRITE_RACES} tries); try again`);
}

/**
 * Re-reads the definition and adopts it if it differs from the one followed.
 * Returns the new definition, or null when nothing changed.
 */
export async function refreshCrawlDefinition(services: CrawlServices): Promise<CrawlDefinition | null> {
  const current = await services.definitions.read();
  if (current === null || (services.definition !== null && current.version === services.definition.version && current.setAt === services.definition.setAt)) {
    return null;
  }
  services.adopt(current);
  await syncLimitPolicy(services);
  return current;
}

/**
 * The limit policy the group gate reads is derived from the definition, never
 * set on its own: idempotent (an unchanged policy keeps its version), so every
 * process that adopts a definition may call it, and a publisher that died
 * between the two writes is healed by the next process that adopts.
 */
async function syncLimitPolicy(services: CrawlServices): Promise<void> {
  await services.limiter.setPolicy(limitPolicyFrom(services.config));
}

/**
 * `config` with the namespace's crawl definition laid over it (unchanged when
 * none is stored), read on a short-lived connection: for commands that only
 * act on the crawl's jobs (dead-letter retry, the dashboard) and must use the
 * fleet's attempts and backoff rather than their own defaults.
 */
export async function readFleetConfig(config: CrawlqConfig, redisUrl: string): Promise<{ config: CrawlqConfig; definition: CrawlDefinition | null }> {
  const redis = await connectRedis(redisUrl, { role: 'producer', name: 'definition-reader' });
  try {
    const definition = await new DefinitionStore(redis, config.namespace).read();
    return { config: definition === null ? config : adoptDefinition(config, definition.values), definition };
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/**
 * The policy a job re-queued by hand (`dlq retry`, the dashboard) gets: a
 * fresh budget by the fleet's crawl definition, except the options this
 * command was given explicitly.
 */
export async function retryJobPolicyFor(config: CrawlqConfig, redisUrl: string): Promise<CrawlJobPolicy> {
  return retryPolicyOf(config, (await readFleetConfig(config, redisUrl)).config);
}

function retryPolicyOf(config: CrawlqConfig, fleetConfig: CrawlqConfig): CrawlJobPolicy {
  const own = jobPolicyFrom(config);
  const fleet = jobPolicyFrom(fleetConfig);
  return {
    attempts: config.explicit.includes('attempts') ? own.attempts : fleet.attempts,
    backoffMs: config.explicit.includes('backoff') ? own.backoffMs : fleet.backoffMs,
  };
}

/** Where `dlq retry` puts dead letters back: each into its group's shard's crawl queue, with the retry policy above. */
export interface DeadLetterRetryTarget {
  readonly policy: CrawlJobPolicy;
  queueOf(group: string): CrawlQueue;
  close(): Promise<void>;
}

/** Opens the crawl queues of the fleet's shards (from its crawl definition) for `dlq retry`. */
export async function openDeadLetterRetry(config: CrawlqConfig, redisUrl: string): Promise<DeadLetterRetryTarget> {
  const fleetConfig = (await readFleetConfig(config, redisUrl)).config;
  const policy = retryPolicyOf(config, fleetConfig);
  const queues = shardNamespaces(config.namespace, fleetConfig.shards).map((namespace) => openCrawlQueue({ url: redisUrl }, namespace));
  return {
    policy,
    queueOf(group) {
      const queue = queues[shardOfGroup(group, queues.length)];
      if (!queue) throw new Error('dlq retry: no crawl queue open');
      return queue;
    },
    async close() {
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
}
