/**
 * How a crawl of several shards lays its keys out. Each shard is a keyspace of
 * its own, named like a namespace (so `queuePrefix` and `stateKeyPrefix` give
 * its keys), with a hash tag of its own: its queue, backlog, gate keys and
 * seen-set slice share one Redis Cluster slot, and every Lua script of a
 * shard stays in it. A group lives in exactly one shard, chosen by hashing
 * its name. Crawl-wide keys (definition, counters, dead letters, alerts)
 * stay under the crawl's own namespace.
 */

const SLOTS = 16_384;

/**
 * The keyspace names of a crawl's shards. One shard is the crawl's own
 * namespace, so a crawl of one shard keeps the layout it always had. With
 * more, shard i is `<namespace>#i.k`, where `k` is the first suffix that puts
 * the tag in the i-th of `shards` equal slot ranges: a cluster that gives its
 * masters equal contiguous ranges (what `redis-cli --cluster create` does)
 * gets the shards spread evenly, instead of by the luck of a hash.
 * (`#` and `.` cannot occur in a namespace, so no two crawls share a tag.)
 */
export function shardNamespaces(namespace: string, shards: number): readonly string[] {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards must be a positive integer, got ${shards}`);
  if (shards === 1) return [namespace];
  const names: string[] = [];
  for (let index = 0; index < shards; index += 1) {
    const low = Math.floor((index * SLOTS) / shards);
    const high = Math.floor(((index + 1) * SLOTS) / shards);
    for (let suffix = 0; ; suffix += 1) {
      const name = `${namespace}#${index}.${suffix}`;
      const slot = clusterSlot(name);
      if (slot >= low && slot < high) {
        names.push(name);
        break;
      }
    }
  }
  return names;
}

/** The shard of a group: FNV-1a of its name, so every process of the fleet agrees without asking Redis. */
export function shardOfGroup(group: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < group.length; i += 1) {
    hash ^= group.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** The Redis Cluster slot of a hash tag's content: CRC16 (XMODEM) mod 16384, as the cluster computes it. */
export function clusterSlot(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}
