import { stateKeyPrefix } from '@crawlq/redis';

/** Redis keys of the dead-letter index, beside the BullMQ keys of the `dead-letter` queue. */
export interface DeadLetterKeys {
  /** Sorted set: entry id -> lastFailedAt (epoch ms). Orders `list()` and drives `trim()`. */
  readonly index: string;
  /** String per crawl job id: when its first attempt failed (epoch ms), until it is dead-lettered or expires. */
  firstFailed(id: string): string;
}

export function deadLetterKeys(namespace: string): DeadLetterKeys {
  const base = `${stateKeyPrefix(namespace)}:dlq`;
  return {
    index: `${base}:index`,
    firstFailed: (id) => `${base}:first-failed:${id}`,
  };
}
