import { hostMatchesGlob } from '@crawlq/urls';
import { DEFAULT_ADAPTIVE_PACING, DEFAULT_SPACING_MARGIN, type GroupLimits, type LimitPolicy, type RateLimit } from './policy.js';

/**
 * The concurrency cap an adapting group with neither a rate nor a concurrency
 * cap paces under: adaptive pacing scales a ceiling, and such a group has
 * none of its own (at full pace it may have this many requests in flight).
 */
export const ADAPTIVE_IMPLIED_CONCURRENCY = 16;

/** A group's limits plus the pacing numbers the Lua scripts work with. */
export interface ResolvedLimits {
  readonly limits: GroupLimits;
  /** GCRA emission interval T' (see `paceIntervalMs`); 0 = no rate limit. */
  readonly intervalMs: number;
  /** GCRA tolerance tau = (burst - 1) * T'. */
  readonly toleranceMs: number;
  /**
   * Concurrency cap at full pace; 0 = unlimited (what the scripts expect). An
   * adapting group without rate or cap gets ADAPTIVE_IMPLIED_CONCURRENCY.
   */
  readonly concurrency: number;
  /** Whether the group's pace adapts (the rule's `adaptive`, else the policy's `adaptive.enabled`). */
  readonly adaptive: boolean;
  /** How much of T' is margin over the rate's own spacing (`durationMs / max`); 0 = no rate limit. */
  readonly marginMs: number;
}

/**
 * The spacing the gate enforces between starts for `rate`: the rate's own spacing
 * S = durationMs / max plus the larger of the safety margin's share
 * (safetyMarginMs / max, which keeps every window of durationMs + safetyMarginMs
 * at max starts) and `spacingMargin` * S (which keeps two consecutive arrivals at
 * least S apart for a zero-burst leaky bucket despite their jitter). 0 = no rate.
 */
export function paceIntervalMs(rate: RateLimit | null, policy: LimitPolicy): number {
  if (rate === null) return 0;
  const own = rate.durationMs / rate.max;
  return own + Math.max(policy.safetyMarginMs / rate.max, (policy.spacingMargin ?? DEFAULT_SPACING_MARGIN) * own);
}

/**
 * The limits for `group` under `policy`: the first rule whose host glob matches
 * the group key (as group rules match hosts: a glob without a port matches any
 * port), its unset fields taken from the defaults.
 */
export function resolveLimits(policy: LimitPolicy, group: string): ResolvedLimits {
  const rule = policy.rules.find((candidate) => hostMatchesGlob(group, candidate.match));
  const limits: GroupLimits = {
    rate: rule?.rate !== undefined ? rule.rate : policy.defaults.rate,
    burst: rule?.burst ?? policy.defaults.burst,
    concurrency: rule?.concurrency !== undefined ? rule.concurrency : policy.defaults.concurrency,
  };
  const intervalMs = paceIntervalMs(limits.rate, policy);
  const adaptive = rule?.adaptive ?? (policy.adaptive ?? DEFAULT_ADAPTIVE_PACING).enabled;
  const implied = adaptive && limits.rate === null && limits.concurrency === null;
  return {
    limits,
    intervalMs,
    toleranceMs: (limits.burst - 1) * intervalMs,
    concurrency: implied ? ADAPTIVE_IMPLIED_CONCURRENCY : (limits.concurrency ?? 0),
    adaptive,
    marginMs: limits.rate === null ? 0 : intervalMs - limits.rate.durationMs / limits.rate.max,
  };
}
