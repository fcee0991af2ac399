import { matchHostGlob } from './host-glob.js';
import type { GroupLimits, LimitPolicy } from './policy.js';

/** A group's limits plus the pacing numbers the Lua scripts work with. */
export interface ResolvedLimits {
  readonly limits: GroupLimits;
  /** GCRA emission interval T' = (durationMs + safetyMarginMs) / max; 0 = no rate limit. */
  readonly intervalMs: number;
  /** GCRA tolerance tau = (burst - 1) * T'. */
  readonly toleranceMs: number;
  /** Concurrency cap; 0 = unlimited (what the scripts expect). */
  readonly concurrency: number;
}

/** The limits for `group` under `policy`: the first matching rule, its unset fields taken from the defaults. */
export function resolveLimits(policy: LimitPolicy, group: string): ResolvedLimits {
  const rule = policy.rules.find((candidate) => matchHostGlob(group, candidate.match));
  const limits: GroupLimits = {
    rate: rule?.rate !== undefined ? rule.rate : policy.defaults.rate,
    burst: rule?.burst ?? policy.defaults.burst,
    concurrency: rule?.concurrency !== undefined ? rule.concurrency : policy.defaults.concurrency,
  };
  const intervalMs = limits.rate === null ? 0 : (limits.rate.durationMs + policy.safetyMarginMs) / limits.rate.max;
  return {
    limits,
    intervalMs,
    toleranceMs: (limits.burst - 1) * intervalMs,
    concurrency: limits.concurrency ?? 0,
  };
}
