import { queuePrefix } from '@crawlq/redis';
import type { Redis } from 'ioredis';

/**
 * Deletes every key of a namespace (BullMQ's and ours share the `{ns}` hash
 * tag), and nothing else on the server: never FLUSHALL a shared Redis.
 */
export async function clearNamespace(redis: Redis, namespace: string): Promise<number> {
  const pattern = `${escapeGlob(queuePrefix(namespace))}:*`;
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
