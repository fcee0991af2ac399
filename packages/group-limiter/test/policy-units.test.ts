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

  it("spaces starts by T' = (duration + margin) / max with tolerance (burst - 1) T'", () => {
    const policy = normalizePolicy({ defaults: { rate: { max: 5, durationMs: 1000 }, burst: 3, concurrency: null } });
    const resolved = resolveLimits(policy, 'x.test');
    expect(resolved.intervalMs).toBe(205);
    expect(resolved.toleranceMs).toBe(410);
    expect(resolved.concurrency).toBe(0);
  });
});

describe('maxInWindow (test helper)', () => {
  it('counts the fullest half-open window', () => {
    expect(maxInWindow([0, 999, 1000, 1500, 1999], 1000)).toBe(3);
    expect(maxInWindow([], 1000)).toBe(0);
  });
});
