import { isKnownCluster, openCluster, type RedisClient } from '@crawlq/redis';
import { Redis, type RedisOptions } from 'ioredis';
import type { HealthReport } from './metrics-server.js';

/**
 * A connection of its own for health checks and gauges: it fails fast while
 * Redis is down (no offline queue) and keeps reconnecting, so `/healthz`
 * turns 503 within a second and back to 200 when Redis returns. A cluster
 * URL gets a Cluster client: the gauges read the crawl's slot, wherever it is.
 */
export function openProbeConnection(url: string): RedisClient {
  const options: RedisOptions = {
    connectionName: `crawlq:${process.pid}:metrics`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
  const redis = isKnownCluster(url) ? openCluster(url, options) : new Redis(url, options);
  redis.on('error', () => undefined); // Health answers carry the error; the log would repeat it every retry.
  return redis;
}

export async function redisHealth(redis: RedisClient, timeoutMs = 1_000): Promise<HealthReport> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, detail: 'ok' };
  } catch (error) {
    return { ok: false, detail: `redis unreachable: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    clearTimeout(timer);
  }
}
