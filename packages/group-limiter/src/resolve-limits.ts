import { hostMatchesGlob } from '@crawlq/urls';
import { DEFAULT_SPACING_MARGIN, type GroupLimits, type LimitPolicy, type RateLimit } from './policy.js';

/** A group's limits plus the pacing numbers the Lua scripts work with. */
export interface ResolvedLimits {
  readonly limits: GroupLimits;
  /** GCRA emission interval T' (see `paceIntervalMs`); 0 = no rate limit. */
  readonly intervalMs: number;
  /** GCRA tolerance tau = (burst - 1) * T'. */
  readonly toleranceMs: number;
  /** Concurrency cap; 0 = unlimited (what the scripts expect). */
  readonly concurrency: number;
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
  return {
    limits,
    intervalMs,
    toleranceMs: (limits.burst - 1) * intervalMs,
    concurrency: limits.concurrency ?? 0,
    marginMs: limits.rate === null ? 0 : intervalMs - limits.rate.durationMs / limits.rate.max,
  };
}
