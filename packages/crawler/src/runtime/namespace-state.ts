import { queuePrefix, type RedisClient } from '@crawlq/redis';
import { Cluster } from 'ioredis';

/**
 * Deletes every key of a namespace (BullMQ's and ours share the `{ns}` hash
 * tag), and nothing else on the server: never FLUSHALL a shared Redis. SCAN
 * walks one node's keys, so on a cluster each master is scanned; the keys
 * found share one slot, so one UNLINK may take them together.
 */
export async function clearNamespace(redis: RedisClient, namespace: string): Promise<number> {
  const pattern = `${escapeGlob(queuePrefix(namespace))}:*`;
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await node.unlink(...keys);
    } while (cursor !== '0');
  }
  return deleted;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
