/**
 * Where a namespace lives in Redis. A Redis Cluster hash tag (`{...}`) keeps
 * all of a crawl's keys, BullMQ's and crawlq's own, in one slot, so multi-key
 * Lua scripts stay legal.
 */

/** The BullMQ prefix of every queue of the namespace. */
export function queuePrefix(namespace: string): string {
  return `{${namespace}}`;
}

/** Prefix for crawlq's own keys (gate, seen-set, counters, dead letters, alerts) beside BullMQ's. */
export function stateKeyPrefix(namespace: string): string {
  return `${queuePrefix(namespace)}:cq`;
}

/** Prefix of the group limiter's keys (the politeness gate) in a namespace or shard keyspace. */
export function gateKeyPrefix(namespace: string): string {
  return `${stateKeyPrefix(namespace)}:gate`;
}
