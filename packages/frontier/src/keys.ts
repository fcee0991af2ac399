import { stateKeyPrefix } from '@crawlq/queue';

/** Redis keys of the frontier, under the crawl's hash tag. */
export function frontierKeys(namespace: string) {
  const prefix = stateKeyPrefix(namespace);
  return {
    /** Fingerprints of every URL ever admitted (the seen-set). */
    seen: `${prefix}:seen`,
    /** Origins of the seeds: `host` and `domain` scope are relative to these. */
    scopeAnchors: `${prefix}:scope:anchors`,
    /** URLs admitted so far, for --max-pages. */
    admitted: `${prefix}:admitted`,
    /** URLs admitted per group, for --max-pages-per-group. */
    admittedPerGroup: `${prefix}:admitted:group`,
  } as const;
}

export type FrontierKeys = ReturnType<typeof frontierKeys>;
