import { stateKeyPrefix } from '@crawlq/redis';

/** Redis keys of a shard's revisit schedule (see `revisit.lua`), under the crawl's hash tag. */
export function revisitKeys(namespace: string) {
  const prefix = `${stateKeyPrefix(namespace)}:rv:`;
  return {
    /** Start of every revisit key: `s:<bucket>` state, `w:<slot>` wheel lists. */
    prefix,
    /** The wheel's non-empty slots, scored by start (ds since REVISIT_EPOCH_MS). */
    slots: `${prefix}slots`,
    /** Counters: known, fetched, changed, unchanged, notModified, bytesSaved, retired, leased. */
    counters: `${prefix}n`,
    /** One counter of every group: a hash whose fields are the groups (see `revisit.lua`). */
    groupCounter: (counter: string) => `${prefix}g:${counter}`,
  } as const;
}

export type RevisitKeys = ReturnType<typeof revisitKeys>;
