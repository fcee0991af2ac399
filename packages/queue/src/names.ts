/** BullMQ queue names. All share one key prefix (see `queuePrefix`). */
export const QUEUE_NAMES = {
  crawl: 'crawl',
  deadLetter: 'dead-letter',
  alerts: 'alerts',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** Job name used for every crawl job (BullMQ requires one; we route by queue). */
export const CRAWL_JOB_NAME = 'fetch';

/**
 * The BullMQ prefix. A Redis Cluster hash tag (`{...}`) keeps all of a crawl's
 * keys, ours and BullMQ's, in one slot so multi-key Lua scripts stay legal.
 */
export function queuePrefix(namespace: string): string {
  return `{${namespace}}`;
}

/** Prefix for crawlq's own keys (gate, seen-set, counters) beside BullMQ's. */
export function stateKeyPrefix(namespace: string): string {
  return `${queuePrefix(namespace)}:cq`;
}
