import type { CrawlqConfig } from '@crawlq/config';
import { resolveRedis, type RedisHandle } from '@crawlq/redis';

/**
 * Runs `body` with a Redis URL: REDIS_URL when set, else the private
 * redis-server under --state-dir (started or joined, released afterwards).
 */
export async function withRedis<T>(config: CrawlqConfig, body: (url: string, handle: RedisHandle) => Promise<T>): Promise<T> {
  const handle = await resolveRedis({ url: config.redisUrl, seeds: config.redisSeeds, stateDir: config.stateDir });
  try {
    return await body(handle.url, handle);
  } finally {
    await handle.release();
  }
}
