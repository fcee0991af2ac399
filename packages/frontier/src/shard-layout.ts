import { shardNamespaces, type RedisClient } from '@crawlq/redis';
import { FrontierError } from './errors.js';
import { frontierKeys } from './keys.js';

/**
 * Records that a crawl's keys are spread over `shards` keyspaces, for readers
 * that have no crawl definition (status, the dashboard, metrics). A crawl of
 * one shard records nothing: an absent record means one. The count is fixed
 * for the crawl's life (the crawl definition refuses a change); a different
 * recorded count means two crawls share a namespace, and is refused.
 */
export async function recordShardCount(redis: RedisClient, namespace: string, shards: number): Promise<void> {
  if (shards <= 1) return;
  const key = frontierKeys(namespace).shards;
  // Not SET NX GET: that needs Redis 7, and crawlq runs on 6.2.
  if ((await redis.set(key, String(shards), 'NX')) === 'OK') return;
  const stored = await redis.get(key);
  if (stored !== null && Number(stored) !== shards) {
    throw new FrontierError(`this crawl's keys are spread over ${stored} shards, not ${shards}: use --shards ${stored}, or another --namespace`, { retryable: false });
  }
}

/** The keyspaces of a crawl's shards, as recorded (see {@link recordShardCount}). */
export async function readShardNamespaces(redis: RedisClient, namespace: string): Promise<readonly string[]> {
  const stored = Number((await redis.get(frontierKeys(namespace).shards)) ?? 1);
  return shardNamespaces(namespace, Number.isInteger(stored) && stored >= 1 ? stored : 1);
}
