import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMIT_POLICY,
  InvalidLimitPolicyError,
  isHostGlob,
  matchHostGlob,
  normalizePolicy,
  resolveLimits,
} from '../src/index.js';
import { maxInWindow } from './support.js';

describe('matchHostGlob', () => {
  it('matches subdomains with *.domain but not the domain itself', () => {
    expect(matchHostGlob('a.example.com', '*.example.com')).toBe(true);
    expect(matchHostGlob('a.b.example.com', '*.example.com')).toBe(true);
    expect(matchHostGlob('example.com', '*.example.com')).toBe(false);
    expect(matchHostGlob('badexample.com', '*.example.com')).toBe(false);
  });

  it('matches exact hosts case-insensitively, ignoring a trailing dot', () => {
    expect(matchHostGlob('Example.COM.', 'example.com')).toBe(true);
    expect(matchHostGlob('www.example.com', 'example.com')).toBe(false);
  });

  it('matches everything with *', () => {
    expect(matchHostGlob('anything.test', '*')).toBe(true);
  });

  it('recognises only the supported glob forms', () => {
    expect(['*', '*.example.com', 'example.com'].every(isHostGlob)).toBe(true);
    expect(['', 'exa*mple.com', '*.', '*.*.com', 'a b'].some(isHostGlob)).toBe(false);
  });
});

describe('normalizePolicy / resolveLimits', () => {
  it('fills documented defaults', () => {
    const policy = normalizePolicy({ defaults: { concurrency: 4 } });
    expect(policy.safetyMarginMs).toBe(25);
    expect(policy.leaseMs).toBe(60_000);
    expect(policy.backoff429).toEqual({ baseMs: 1000, maxMs: 60_000 });
    expect(policy.maxPauseMs).toBe(3_600_000);
    expect(policy.defaults).toEqual({ ...DEFAULT_LIMIT_POLICY.defaults, concurrency: 4 });
  });

  it('lists every problem', () => {
    const attempt = (): unknown =>
      normalizePolicy({
        defaults: { rate: { max: 0, durationMs: 1000 }, burst: 1.5 },
        rules: [{ match: 'a*b', concurrency: 0 }],
        backoff429: { baseMs: 100, maxMs: 50 },
      });
    expect(attempt).toThrow(InvalidLimitPolicyError);
    try {
      attempt();
    } catch (error) {
      expect((error as InvalidLimitPolicyError).issues).toHaveLength(5);
      expect((error as InvalidLimitPolicyError).retryable).toBe(false);
    }
  });

  it('takes the first matching rule and falls back to defaults for unset fields', () => {
    const policy = normalizePolicy({
      defaults: { rate: { max: 5, durationMs: 1000 }, burst: 2, concurrency: 3 },
      rules: [
        { match: 'api.example.com', concurrency: 1 },
        { match: '*.example.com', rate: null },
        { match: '*', rate: { max: 1, durationMs: 500 } },
      ],
    });
    expect(resolveLimits(policy, 'api.example.com').limits).toEqual({ rate: { max: 5, durationMs: 1000 }, burst: 2, concurrency: 1 });
    expect(resolveLimits(policy, 'www.example.com').limits).toEqual({ rate: null, burst: 2, concurrency: 3 });
    expect(resolveLimits(policy, 'example.com').limits.rate).toEqual({ max: 1, durationMs: 500 });
  });

  it("spaces starts by T' = S + max(margin / max, spacingMargin * S), S = duration / max, with tolerance (burst - 1) T'", () => {
    const policy = normalizePolicy({ defaults: { rate: { max: 5, durationMs: 1000 }, burst: 3, concurrency: null } });
    expect(policy.spacingMargin).toBe(0.05);
    const resolved = resolveLimits(policy, 'x.test');
    // 5% of 200 ms (10) beats the safety margin's share (25 / 5 = 5).
    expect(resolved.intervalMs).toBe(210);
    expect(resolved.marginMs).toBe(10);
    expect(resolved.toleranceMs).toBe(420);
    expect(resolved.concurrency).toBe(0);
    // A large safety margin wins: its share keeps every window of duration + margin at max.
    const wide = normalizePolicy({ defaults: { rate: { max: 5, durationMs: 1000 } }, safetyMarginMs: 100 });
    expect(resolveLimits(wide, 'x.test').intervalMs).toBe(220);
    // spacingMargin 0 restores T' = (duration + margin) / max.
    const windowOnly = normalizePolicy({ defaults: { rate: { max: 5, durationMs: 1000 } }, spacingMargin: 0 });
    expect(resolveLimits(windowOnly, 'x.test').intervalMs).toBe(205);
    expect(() => normalizePolicy({ spacingMargin: 1.5 })).toThrow(/spacingMargin must be a finite number in \[0, 1\]/);
  });

  it('fills globalRate with null and validates it like a group rate', () => {
    expect(normalizePolicy({}).globalRate).toBeNull();
    expect(normalizePolicy({ globalRate: { max: 10, durationMs: 1000 } }).globalRate).toEqual({ max: 10, durationMs: 1000 });
    expect(() => normalizePolicy({ globalRate: { max: 0, durationMs: 1000 } })).toThrow(/globalRate.max/);
  });
});

describe('maxInWindow (test helper)', () => {
  it('counts the fullest half-open window', () => {
    expect(maxInWindow([0, 999, 1000, 1500, 1999], 1000)).toBe(3);
    expect(maxInWindow([], 1000)).toBe(0);
  });
});
