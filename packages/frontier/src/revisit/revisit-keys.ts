import { stateKeyPrefix } from '@crawlq/redis';

/** Redis keys of a shard's revisit schedule (see REVISIT_INCLUDE), under the crawl's hash tag. */
export function revisitKeys(namespace: string) {
  const prefix = `${stateKeyPrefix(namespace)}:rv:`;
  return {
    /** Start of every revisit key: `s:<bucket>` state, `w:<slot>` wheel lists. */
    prefix,
    /** The wheel's non-empty slots, scored by start (ds since REVISIT_EPOCH_MS). */
    slots: `${prefix}slots`,
    /** Counters: known, fetched, changed, unchanged, notModified, bytesSaved, retired, leased. */
    counters: `${prefix}n`,
  } as const;
}

export type RevisitKeys = ReturnType<typeof revisitKeys>;
