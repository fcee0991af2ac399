import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMIT_POLICY,
  InvalidLimitPolicyError,
  normalizePolicy,
  resolveLimits,
} from '../src/index.js';
import { maxInWindow } from './support.js';

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

  it('matches groups with a port as group rules match hosts: a rule without a port applies on every port', () => {
    const policy = normalizePolicy({
      defaults: { rate: null, burst: 1, concurrency: null },
      rules: [
        { match: 'a.example.com:9090', concurrency: 9 },
        { match: '*.example.com', concurrency: 2 },
        { match: '*:8443', concurrency: 7 },
      ],
    });
    // Before limit rules and group rules shared one matcher, a limit rule `*.example.com` missed the group `a.example.com:8080` that a group rule caught.
    expect(resolveLimits(policy, 'a.example.com:8080').limits.concurrency).toBe(2);
    expect(resolveLimits(policy, 'a.example.com').limits.concurrency).toBe(2);
    // An explicit port matches only that port.
    expect(resolveLimits(policy, 'a.example.com:9090').limits.concurrency).toBe(9);
    expect(resolveLimits(policy, 'b.example.com:9090').limits.concurrency).toBe(2);
    expect(resolveLimits(policy, 'other.test:8443').limits.concurrency).toBe(7);
    expect(resolveLimits(policy, 'other.test:8080').limits.concurrency).toBeNull();
  });

  it('accepts the glob forms group rules accept, ports included, and refuses others', () => {
    const rules = ['*', '*.example.com', 'example.com', '*:8080', 'example.com:8080', '[::1]:3000'].map((match) => ({ match }));
    expect(normalizePolicy({ rules }).rules.map((rule) => rule.match)).toEqual(rules.map((rule) => rule.match));
    for (const match of ['', 'exa*mple.com', '*.', '*.*.com', 'a b']) expect(() => normalizePolicy({ rules: [{ match }] })).toThrow(InvalidLimitPolicyError);
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
