import { stateKeyPrefix } from '@crawlq/redis';

/**
 * Redis keys of the alert digests. All share the namespace hash tag, so the
 * multi-key Lua scripts stay legal on Redis Cluster.
 */
export interface AlertKeys {
  /** Hash of the events not yet in a digest: total, g:<group>, r:<reason>, firstAt, lastAt. */
  readonly pending: string;
  /** List of up to ten example events (JSON) not yet in a digest. */
  readonly pendingExamples: string;
  /** Hash: seq (the number of the digest now collecting events), lastDigestAt (epoch ms). */
  readonly state: string;
  /** Set while `flush()` runs: digests may go out before their window. */
  readonly flush: string;
  /** Where a digest job's events are moved (RENAME) when the job takes them. */
  taken(jobId: string): string;
  takenExamples(jobId: string): string;
}

export function alertKeys(namespace: string): AlertKeys {
  const base = `${stateKeyPrefix(namespace)}:alerts`;
  return {
    pending: `${base}:pending`,
    pendingExamples: `${base}:pending:examples`,
    state: `${base}:state`,
    flush: `${base}:flush`,
    taken: (jobId) => `${base}:taken:${jobId}`,
    takenExamples: (jobId) => `${base}:taken:${jobId}:examples`,
  };
}
