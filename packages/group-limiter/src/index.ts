export { createGroupLimiter, globalShare, type GroupLimiter, type GroupLimiterOptions, type AcquireRequest, type PacedCall, type SetPolicyResult } from './group-limiter.js';
export type { Admission, DenialReason, Lease, Outcome, PaceChange, RetakenStart, StartCheck } from './admission.js';
export { describePaceChange } from './admission.js';
export type { GlobalStatus, GroupStatus } from './group-status.js';
export {
  DEFAULT_ADAPTIVE_PACING,
  MIN_ADAPTIVE_FLOOR,
  DEFAULT_GROUP_LIMITS,
  DEFAULT_LIMIT_POLICY,
  DEFAULT_MAX_MIN_INTERVAL_MS,
  DEFAULT_SPACING_MARGIN,
  normalizePolicy,
  type AdaptivePacing,
  type Backoff429,
  type GroupLimits,
  type LimitPolicy,
  type LimitPolicyInput,
  type LimitRule,
  type RateLimit,
} from './policy.js';
export { ADAPTIVE_IMPLIED_CONCURRENCY, paceIntervalMs, resolveLimits, type ResolvedLimits } from './resolve-limits.js';
export { limiterKeys, type LimiterKeys } from './keys.js';
export { DEFAULT_SERVER_POLICY, ServerLimitsBook, type ServerLimits, type ServerPolicy, type ServerPolicyInput, type ServerRule, type ServerTarget } from './server-policy.js';
export { mergeServerStatuses, type ServerStatus } from './server-status.js';
export { ScriptCode } from './lua/script-code.js';
export { LIMITER_LUA } from './lua/files.js';
export {
  GroupLimiterError,
  GroupLimiterArgumentError,
  GroupLimiterRedisError,
  InvalidLimitPolicyError,
  PolicyVersionRaceError,
} from './errors.js';
export { createShardLimiters, createShardedGroupLimiter } from './sharded-limiter.js';
