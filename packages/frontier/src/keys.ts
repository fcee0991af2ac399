import { stateKeyPrefix } from '@crawlq/redis';

/** Redis keys of the frontier, under the crawl's hash tag. */
export function frontierKeys(namespace: string) {
  const prefix = stateKeyPrefix(namespace);
  return {
    /**
     * The seen-set's meta hash (mode, geometry, count); its data keys are
     * `<seen>:x:<bucket>` (exact) or `<seen>:b:<part>` (bloom). Exists once any
     * URL has been marked.
     */
    seen: `${prefix}:seen`,
    /** Origins of the seeds: `host` and `domain` scope are relative to these. */
    scopeAnchors: `${prefix}:scope:anchors`,
    /** URLs admitted so far, for --max-pages (in a shard: admitted in the shard). */
    admitted: `${prefix}:admitted`,
    /** A shard's share of --max-pages granted so far (see grantPagesScript). */
    pagesGranted: `${prefix}:admitted:granted`,
    /** A sharded crawl's grants of --max-pages: `total`, and per shard index. */
    pageGrants: `${prefix}:admitted:grants`,
    /** URLs admitted per group, for --max-pages-per-group. */
    admittedPerGroup: `${prefix}:admitted:group`,
    /**
     * Start of the backlog's keys (stage one of the frontier; see `lua/backlog.lua`):
     * `<backlog>groups`, `<backlog>count`, `<backlog>idSeq` (numbers the ids of
     * jobs whose first URL's id is taken by a job still there), and per group
     * `q:`, `d:` and `r:` keys.
     */
    backlog: `${prefix}:bk:`,
    /** Entries in all backlogs (URLs admitted and not yet released as jobs). */
    backlogCount: `${prefix}:bk:count`,
    /** Worker processes that release backlogs (BacklogReleaser), scored by their last release (ms): they share one fleet-wide pace. */
    releasers: `${prefix}:bk:releasers`,
    /** Groups with backlog entries, scored by when each may next release a job. */
    backlogGroups: `${prefix}:bk:groups`,
    /** How many shards the crawl's keys are spread over (absent: one, the namespace itself; see shard-layout.ts). */
    shards: `${prefix}:shards`,
  } as const;
}

export type FrontierKeys = ReturnType<typeof frontierKeys>;
