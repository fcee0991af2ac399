import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import type { WarcWriterLease } from '@crawlq/sink';

/**
 * WARC writers' leases as Redis keys with a TTL, in the crawl's keyspace. The
 * TTL runs on the Redis server's clock, the one clock every worker of the
 * crawl shares, so a lease ends at the same moment for all of them, however
 * far apart their own clocks are.
 */
export function redisWarcLease(redis: RedisClient, namespace: string): WarcWriterLease {
  const key = (writer: string) => `${stateKeyPrefix(namespace)}:warc-writer:${writer}`;
  return {
    async hold(writer, ttlMs) {
      await redis.set(key(writer), String(process.pid), 'PX', ttlMs);
    },
    async release(writer) {
      await redis.del(key(writer));
    },
    async remainingMs(writer) {
      const ttl = await redis.pttl(key(writer));
      // -2: no such key (no lease); -1: a key without a TTL, which no writer sets: taken as held.
      if (ttl === -2) return 0;
      return ttl === -1 ? Number.POSITIVE_INFINITY : ttl;
    },
  };
}
