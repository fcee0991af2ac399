/**
 * Redis key layout. Every key starts with the caller's prefix, which should hold
 * one hash tag per crawl (`crawlq:{crawl}`) so all keys share a Redis Cluster slot
 * and multi-key scripts work there too. Hashes and lease sets live in separate
 * namespaces (`group:` / `leases:`) so no group name can collide with another key.
 */
export interface LimiterKeys {
  /** Hash: `json` (the normalized policy), `version` (opaque), `seq` (counter). */
  readonly policy: string;
  /** Set of every group the limiter has seen, for `list()`. */
  readonly groups: string;
  /** Hash of the crawl-wide pacing (`globalRate`): tat, wakeAt, admitted, deferred. */
  readonly global: string;
  /**
   * Hash of a group's state: tat, wakeAt, pausedUntil, pauseReason, strikes, strikeAt, holdMs, admitted, deferred,
   * lastAdmitAt, minInterval, leasesKeptTo (until when its lease set is kept); adaptive pacing: pace, cutAt, paceCause, paceReason, paceChangedAt, paceCuts, latency, baseline;
   * a server it holds alone (see lua/server-gate.lua): soloAt (the server), stat (its pacing), soloBase (the group's admissions when the hold began).
   */
  group(group: string): string;
  /** Sorted set of a group's leases: member = lease id, score = expiry (Redis-clock ms). */
  leases(group: string): string;
}

/** The keys for one limiter prefix. */
export function limiterKeys(prefix: string): LimiterKeys {
  return {
    policy: `${prefix}:policy`,
    groups: `${prefix}:groups`,
    global: `${prefix}:global`,
    group: (group) => `${prefix}:group:${group}`,
    leases: (group) => `${prefix}:leases:${group}`,
  };
}
