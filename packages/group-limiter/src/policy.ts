import { isHostGlob } from '@crawlq/urls';
import { InvalidLimitPolicyError } from './errors.js';
import { DEFAULT_SERVER_POLICY, normalizeServerPolicy, type ServerPolicy, type ServerPolicyInput } from './server-policy.js';

/** At most `max` request starts per `durationMs`. */
export interface RateLimit {
  readonly max: number;
  readonly durationMs: number;
}

/** The limits that apply to one group (host or registrable domain). */
export interface GroupLimits {
  /** Starts per window; `null` = unlimited. */
  readonly rate: RateLimit | null;
  /** Starts allowed back to back (>= 1). 1 = evenly spaced starts, `durationMs / max` apart. */
  readonly burst: number;
  /** Requests in flight at once; `null` = unlimited. */
  readonly concurrency: number | null;
}

/** Limits for the groups matching a host glob; unspecified fields fall back to the policy defaults. */
export interface LimitRule extends Partial<GroupLimits> {
  /** Host glob: `'*.example.com'`, `'example.com'` or `'*'`, optionally with `:port` (see `hostMatchesGlob` in @crawlq/urls). */
  readonly match: string;
  /** Whether the matching groups adapt their pace (see `AdaptivePacing`); unset: `adaptive.enabled`. */
  readonly adaptive?: boolean;
}

/**
 * Adaptive pacing (AIMD): each adapting group's pace moves between
 * `floor` and its configured limits by a pace factor f in [floor, 1] shared by
 * the whole fleet. The interval between starts is divided by f, a concurrency
 * cap multiplied by it (rounded down, at least 1). A 5xx, 429, 408, timeout
 * or connection error halves f; a latency EWMA over limit =
 * max(latencyTolerance * baseline, baseline + latencySlackMs), the baseline
 * being the lowest latency seen, cuts it to limit / EWMA of it (at least
 * half); at most one cut per episode. f grows back by `risePerSecond` per second.
 */
export interface AdaptivePacing {
  /**
   * Groups adapt unless their rule says otherwise.
   * @default false
   */
  readonly enabled: boolean;
  /**
   * Lowest pace factor: a group never goes slower than this share of its limits.
   * @default 0.1
   */
  readonly floor: number;
  /**
   * Pace factor regained per second since the last cut (additive increase).
   * @default 0.01 (half pace back to full in 50 s)
   */
  readonly risePerSecond: number;
  /** @default 2 */
  readonly latencyTolerance: number;
  /** @default 100 */
  readonly latencySlackMs: number;
}

/** Backoff for consecutive 429 responses that carry no `Retry-After`. */
export interface Backoff429 {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** The fleet-wide limit policy, stored in Redis so that every worker enforces the same limits. */
export interface LimitPolicy {
  readonly defaults: GroupLimits;
  /** First match wins (like Colly's `LimitRule`). */
  readonly rules: readonly LimitRule[];
  /**
   * Added to each rate window when spacing starts, so that the jitter between the
   * gate admitting a start and the request reaching the server cannot squeeze an
   * extra start into a window as the server measures it.
   * @default 25
   */
  readonly safetyMarginMs: number;
  /**
   * Share of a rate's own spacing (`durationMs / max`) added to it, when that is more
   * than the safety margin's share (`safetyMarginMs / max`). Servers that enforce a
   * rate with a zero-burst leaky bucket (nginx `limit_req` without `burst`) reject a
   * request that arrives less than one spacing after the last one they accepted, so
   * the arrival jitter of consecutive starts (connection set-up, event-loop delay, a
   * late start within its allowance, the server's millisecond clock) must fit in
   * the spacing itself, not only in the window. Optional in the type for policies
   * written before it existed; `normalizePolicy` fills it in.
   * @default 0.05
   */
  readonly spacingMargin?: number;
  /**
   * Fleet-wide cap on request starts across every group, enforced by the same gate
   * (atomically with the group's limits); `null` = none. Optional in the type for
   * policies written before it existed; `normalizePolicy` fills it in.
   * @default null
   */
  readonly globalRate?: RateLimit | null;
  /**
   * Concurrency leases expire after this long, so a crashed worker gives its slots back.
   * @default 60000
   */
  readonly leaseMs: number;
  /** @default { baseMs: 1000, maxMs: 60000 } */
  readonly backoff429: Backoff429;
  /**
   * Cap for `Retry-After` and admin pauses.
   * @default 3600000
   */
  readonly maxPauseMs: number;
  /**
   * Cap for a group's minimum interval between starts (`setMinInterval`, from a
   * robots.txt `Crawl-delay`): a site asking for an hour between requests gets
   * this much instead. 0 turns minimum intervals off. Optional in the type so
   * policies written before it existed still type-check; `normalizePolicy`
   * always fills it in.
   * @default 30000
   */
  readonly maxMinIntervalMs?: number;
  /**
   * Adaptive pacing; optional in the type for policies written before it
   * existed (`normalizePolicy` fills it in).
   * @default DEFAULT_ADAPTIVE_PACING (off)
   */
  readonly adaptive?: AdaptivePacing;
  /**
   * The server level of the gate: limits per server (the address a request's
   * connection goes to), over all the groups behind it, admitted in the same
   * script as the group's. Optional in the type for policies written before
   * it existed; `normalizePolicy` fills it in.
   * @default DEFAULT_SERVER_POLICY (no server limits)
   */
  readonly servers?: ServerPolicy;
}

/** A `LimitPolicy` with every field optional; missing fields take the documented defaults. */
export interface LimitPolicyInput {
  readonly defaults?: Partial<GroupLimits>;
  readonly rules?: readonly LimitRule[];
  readonly safetyMarginMs?: number;
  readonly leaseMs?: number;
  readonly backoff429?: Partial<Backoff429>;
  readonly maxPauseMs?: number;
  readonly maxMinIntervalMs?: number;
  readonly spacingMargin?: number;
  readonly globalRate?: RateLimit | null;
  readonly adaptive?: Partial<AdaptivePacing>;
  readonly servers?: ServerPolicyInput;
}

/** Adaptive pacing as `normalizePolicy` fills it in: off, floor 0.1, 0.01 per second back up. */
export const DEFAULT_ADAPTIVE_PACING: AdaptivePacing = Object.freeze({
  enabled: false,
  floor: 0.1,
  risePerSecond: 0.01,
  latencyTolerance: 2,
  latencySlackMs: 100,
});

/** A pace factor this small would stretch a 1/s group to one start per 17 minutes: below it is a mistake. */
export const MIN_ADAPTIVE_FLOOR = 0.001;

/** Default share of a rate's spacing kept as margin (`LimitPolicy.spacingMargin`). */
export const DEFAULT_SPACING_MARGIN = 0.05;

/** Default cap of a group's own minimum interval (`LimitPolicy.maxMinIntervalMs`). */
export const DEFAULT_MAX_MIN_INTERVAL_MS = 30_000;

/** Limits for groups that no rule matches when the policy does not say: one start per second, one at a time. */
export const DEFAULT_GROUP_LIMITS: GroupLimits = Object.freeze({
  rate: Object.freeze({ max: 1, durationMs: 1000 }),
  burst: 1,
  concurrency: 1,
});

/** The policy used until one is stored in Redis (and none was passed to `createGroupLimiter`). */
export const DEFAULT_LIMIT_POLICY: LimitPolicy = Object.freeze({
  defaults: DEFAULT_GROUP_LIMITS,
  rules: Object.freeze([]),
  safetyMarginMs: 25,
  leaseMs: 60_000,
  backoff429: Object.freeze({ baseMs: 1000, maxMs: 60_000 }),
  maxPauseMs: 3_600_000,
  maxMinIntervalMs: DEFAULT_MAX_MIN_INTERVAL_MS,
  spacingMargin: DEFAULT_SPACING_MARGIN,
  globalRate: null,
  adaptive: DEFAULT_ADAPTIVE_PACING,
  servers: DEFAULT_SERVER_POLICY,
});

/**
 * Validates a policy and fills in defaults. The result has a fixed key order, so
 * `JSON.stringify` of two equal policies yields the same string.
 * @throws InvalidLimitPolicyError listing every problem found
 */
export function normalizePolicy(input: LimitPolicyInput, operation = 'normalizePolicy'): LimitPolicy {
  const check = new PolicyChecker();
  const defaults = check.limits(input.defaults ?? {}, 'defaults');
  const rules = (input.rules ?? []).map((rule, index) => check.rule(rule, `rules[${index}]`));
  const base = DEFAULT_LIMIT_POLICY;
  const policy: LimitPolicy = {
    defaults,
    rules,
    safetyMarginMs: check.number(input.safetyMarginMs ?? base.safetyMarginMs, 'safetyMarginMs', { min: 0 }),
    leaseMs: check.number(input.leaseMs ?? base.leaseMs, 'leaseMs', { min: 1 }),
    backoff429: {
      baseMs: check.number(input.backoff429?.baseMs ?? base.backoff429.baseMs, 'backoff429.baseMs', { min: 1 }),
      maxMs: check.number(input.backoff429?.maxMs ?? base.backoff429.maxMs, 'backoff429.maxMs', { min: 1 }),
    },
    maxPauseMs: check.number(input.maxPauseMs ?? base.maxPauseMs, 'maxPauseMs', { min: 1 }),
    maxMinIntervalMs: check.number(input.maxMinIntervalMs ?? DEFAULT_MAX_MIN_INTERVAL_MS, 'maxMinIntervalMs', { min: 0 }),
    spacingMargin: check.number(input.spacingMargin ?? DEFAULT_SPACING_MARGIN, 'spacingMargin', { min: 0, max: 1 }),
    globalRate: check.rate(input.globalRate ?? null, 'globalRate'),
    adaptive: check.adaptive(input.adaptive ?? {}),
    servers: normalizeServerPolicy(input.servers ?? {}, check.issues),
  };
  if (policy.backoff429.maxMs < policy.backoff429.baseMs) check.issues.push('backoff429.maxMs must be >= backoff429.baseMs');
  if (check.issues.length > 0) throw new InvalidLimitPolicyError(check.issues, { operation });
  return policy;
}

/** Checks policy parts, collecting every problem instead of stopping at the first. */
class PolicyChecker {
  readonly issues: string[] = [];

  rule(rule: LimitRule, path: string): LimitRule {
    if (typeof rule.match !== 'string' || !isHostGlob(rule.match)) {
      this.issues.push(`${path}.match must be '*', '*.domain' or an exact host (optionally with :port), got ${JSON.stringify(rule.match)}`);
    }
    // Only the fields the rule sets: the others keep falling back to the defaults.
    const out: { match: string; rate?: RateLimit | null; burst?: number; concurrency?: number | null; adaptive?: boolean } = {
      match: rule.match,
    };
    if (rule.rate !== undefined) out.rate = this.rate(rule.rate, `${path}.rate`);
    if (rule.burst !== undefined) out.burst = this.number(rule.burst, `${path}.burst`, { min: 1, integer: true });
    if (rule.concurrency !== undefined) out.concurrency = this.concurrency(rule.concurrency, `${path}.concurrency`);
    if (rule.adaptive !== undefined) out.adaptive = this.flag(rule.adaptive, `${path}.adaptive`);
    return out;
  }

  adaptive(input: Partial<AdaptivePacing>): AdaptivePacing {
    const base = DEFAULT_ADAPTIVE_PACING;
    return {
      enabled: this.flag(input.enabled ?? base.enabled, 'adaptive.enabled'),
      floor: this.number(input.floor ?? base.floor, 'adaptive.floor', { min: MIN_ADAPTIVE_FLOOR, max: 1 }),
      risePerSecond: this.number(input.risePerSecond ?? base.risePerSecond, 'adaptive.risePerSecond', { min: 0.000_1, max: 10 }),
      latencyTolerance: this.number(input.latencyTolerance ?? base.latencyTolerance, 'adaptive.latencyTolerance', { min: 1 }),
      latencySlackMs: this.number(input.latencySlackMs ?? base.latencySlackMs, 'adaptive.latencySlackMs', { min: 0 }),
    };
  }

  flag(value: unknown, path: string): boolean {
    if (typeof value === 'boolean') return value;
    this.issues.push(`${path} must be true or false, got ${JSON.stringify(value)}`);
    return false;
  }

  limits(limits: Partial<GroupLimits>, path: string): GroupLimits {
    const fallback = DEFAULT_GROUP_LIMITS;
    return {
      rate: limits.rate === undefined ? fallback.rate : this.rate(limits.rate, `${path}.rate`),
      burst: this.number(limits.burst ?? fallback.burst, `${path}.burst`, { min: 1, integer: true }),
      concurrency:
        limits.concurrency === undefined ? fallback.concurrency : this.concurrency(limits.concurrency, `${path}.concurrency`),
    };
  }

  rate(rate: RateLimit | null, path: string): RateLimit | null {
    if (rate === null) return null;
    if (typeof rate !== 'object') {
      this.issues.push(`${path} must be { max, durationMs } or null`);
      return null;
    }
    return {
      max: this.number(rate.max, `${path}.max`, { min: 1, integer: true }),
      durationMs: this.number(rate.durationMs, `${path}.durationMs`, { min: 1 }),
    };
  }

  concurrency(value: number | null, path: string): number | null {
    return value === null ? null : this.number(value, path, { min: 1, integer: true });
  }

  number(value: unknown, path: string, rule: { min: number; max?: number; integer?: boolean }): number {
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= rule.min &&
      (rule.max === undefined || value <= rule.max) &&
      (!rule.integer || Number.isInteger(value));
    if (!ok) {
      const range = rule.max === undefined ? `>= ${rule.min}` : `in [${rule.min}, ${rule.max}]`;
      this.issues.push(`${path} must be ${rule.integer ? 'an integer' : 'a finite number'} ${range}, got ${JSON.stringify(value)}`);
      return rule.min;
    }
    return value;
  }
}
