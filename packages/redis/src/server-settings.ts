/**
 * Server settings a crawlq Redis runs with (`redis.conf` names). The embedded
 * redis-server is started with them; infra/redis.conf and infra/compose.yaml
 * spell them out (test/infra-manifests.test.ts checks that they agree), and
 * `pnpm bench scale` applies them to the Redis it measures.
 */
export const REDIS_SERVER_SETTINGS = {
  /** BullMQ loses jobs silently if Redis evicts keys: never evict. */
  'maxmemory-policy': 'noeviction',
  /**
   * A BullMQ job hash (name, data, opts, timestamp, delay, priority) is a
   * compact listpack only while every value is at most this many bytes. Redis's
   * default, 64, is shorter than a crawl job's `data` (URL, depth, group) and
   * `opts`, so every queued job became a hashtable of about twice the memory
   * (`pnpm bench scale` prints both). 1024 keeps jobs for URLs up to
   * about 950 characters compact; a longer value (a long URL, a failed job's
   * stack trace) only turns that one hash into a hashtable.
   */
  'hash-max-listpack-value': '1024',
} as const satisfies Record<string, string>;

/** The settings as redis-server command-line arguments (`--name value ...`). */
export function redisServerArgs(): string[] {
  return Object.entries(REDIS_SERVER_SETTINGS).flatMap(([name, value]) => [`--${name}`, value]);
}
