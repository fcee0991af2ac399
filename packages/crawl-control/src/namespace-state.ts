import { queuePrefix, type RedisClient } from '@crawlq/redis';
import { Cluster } from 'ioredis';

/**
 * Deletes every key of a namespace (BullMQ's and ours share the `{ns}` hash
 * tag; its shards have tags of their own), and nothing else on the server:
 * never FLUSHALL a shared Redis. SCAN walks one node's keys, so on a cluster
 * each master is scanned; keys of one tag share one slot, so one UNLINK may
 * take them together.
 */
export async function clearNamespace(redis: RedisClient, namespace: string): Promise<number> {
  // The crawl's own tag, and its shards' (`{<namespace>#i.k}`; `#` cannot occur in a namespace).
  const patterns = [`${escapeGlob(queuePrefix(namespace))}:*`, `{${escapeGlob(namespace)}#*}:*`];
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let deleted = 0;
  for (const node of nodes) {
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        // One UNLINK per shard: keys of two shards may hash to two slots of this node.
        for (const slotKeys of groupByTag(keys)) deleted += await node.unlink(...slotKeys);
      } while (cursor !== '0');
    }
  }
  return deleted;
}

function groupByTag(keys: readonly string[]): string[][] {
  const byTag = new Map<string, string[]>();
  for (const key of keys) {
    const tag = key.slice(0, key.indexOf('}') + 1);
    const group = byTag.get(tag);
    if (group) group.push(key);
    else byTag.set(tag, [key]);
  }
  return [...byTag.values()];
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
