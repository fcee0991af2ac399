import { describe, expect, it } from 'vitest';
import { estimatedRate, HUB_FACTOR, headerHintMs, hintFloor, isHub, linkSetHash, nextSchedule, optimalIntervalMs, type ChangeHistory } from '../../src/revisit/revisit-interval.js';

const policy = { mode: 'adaptive' as const, minMs: 5_000, maxMs: 600_000 };

/** Seeded uniform numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Visits a page changing at random with mean gap `meanMs` (Infinity: never) under the policy; the intervals chosen. */
function visit(meanMs: number, visits: number, seed: number): number[] {
  const random = seeded(seed);
  let { intervalMs, history } = nextSchedule({ policy, previousMs: undefined, changed: true });
  const intervals = [intervalMs];
  for (let i = 0; i < visits; i += 1) {
    const changed = random() < 1 - Math.exp(-intervalMs / meanMs);
    ({ intervalMs, history } = nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed }));
    intervals.push(intervalMs);
  }
  return intervals;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

describe('adaptive revisit intervals (freshness-optimal for the estimated change rate)', () => {
  it('estimates a Poisson change rate from changes seen at visits', () => {
    // Visits every 10 s, a change seen at 4 of 10: the rate whose chance of a change in 10 s is 40%.
    const history: ChangeHistory = { changes: 4, unchangedMs: 60_000, changedMs: 40_000 };
    expect(estimatedRate(history)).toBeCloseTo(-Math.log(0.6) / 10_000, 9);
    expect(estimatedRate({ changes: 0, unchangedMs: 100_000, changedMs: 0 })).toBe(0);
  });

  it('gives the optimal interval: longer for slower pages, the shortest at --revisit-min, none chased past about 1/μ', () => {
    const at = (meanMs: number) => optimalIntervalMs(policy, 1 / meanMs);
    // Slow pages: about sqrt(2 μ T), μ = min / 3.33.
    expect(at(3_600_000)).toBeGreaterThan(at(300_000));
    expect(at(300_000)).toBeGreaterThan(at(30_000));
    expect(at(300_000) / Math.sqrt(2 * (5_000 / 3.33) * 300_000)).toBeGreaterThan(0.9);
    expect(at(300_000) / Math.sqrt(2 * (5_000 / 3.33) * 300_000)).toBeLessThan(1.1);
    // The page most worth it is revisited every --revisit-min; faster ones less often.
    expect(at(2_500)).toBeLessThan(7_000);
    expect(at(500)).toBe(policy.maxMs);
    // Never seen to change: the maximum.
    expect(optimalIntervalMs(policy, 0)).toBe(policy.maxMs);
  });

  it('learns each page: every 30 s pages about every 10 s, 5 s pages about every 5-7 s, never-changing ones drift to the maximum', () => {
    for (const seed of [1, 2, 3]) {
      const fast = visit(5_000, 40, seed).slice(20);
      const medium = visit(30_000, 40, seed).slice(20);
      const never = visit(Number.POSITIVE_INFINITY, 40, seed);
      expect(median(fast)).toBeGreaterThanOrEqual(5_000);
      expect(median(fast)).toBeLessThan(8_000);
      expect(median(medium)).toBeGreaterThan(7_000);
      expect(median(medium)).toBeLessThan(16_000);
      expect(never.at(-1)).toBe(policy.maxMs);
      // Grows at every unchanged visit, never shrinks.
      for (let i = 2; i < never.length; i += 1) expect(never[i] ?? 0).toBeGreaterThanOrEqual(never[i - 1] ?? 0);
    }
  });

  it('stays within the bounds, and a fixed interval is that interval', () => {
    for (const interval of visit(1_000, 30, 9)) {
      expect(interval).toBeGreaterThanOrEqual(policy.minMs);
      expect(interval).toBeLessThanOrEqual(policy.maxMs);
    }
    expect(nextSchedule({ policy: { mode: 45_000, minMs: 1, maxMs: 2 }, previousMs: 45_000, changed: true })).toEqual({ intervalMs: 45_000, history: undefined });
  });

  it('starts a new URL from a Cache-Control hint, and holds every interval to at least the hint, within the bounds', () => {
    // The hint as the prior of a new URL's change rate: a long one starts it further out.
    const unhinted = nextSchedule({ policy, previousMs: undefined, changed: true }).intervalMs;
    expect(nextSchedule({ policy, previousMs: undefined, changed: true, hintMs: 86_400_000 }).intervalMs).toBeGreaterThan(unhinted);
    // The hint as a floor: a page that changes at every visit still waits until its copy goes stale.
    let { intervalMs, history } = nextSchedule({ policy, previousMs: undefined, changed: true, hintMs: 40_000 });
    for (let i = 0; i < 20; i += 1) {
      expect(intervalMs).toBeGreaterThanOrEqual(40_000);
      ({ intervalMs, history } = nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed: true, hintMs: 40_000 }));
    }
    // Without the hint the same page is fetched sooner: the floor is what held it.
    expect(nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed: true }).intervalMs).toBeLessThan(40_000);
    // A fixed interval ignores hints.
    expect(nextSchedule({ policy: { mode: 45_000, minMs: 1, maxMs: 2 }, previousMs: 45_000, changed: true, hintMs: 3_600_000 }).intervalMs).toBe(45_000);
  });

  it('a lying header cannot break the bounds: ten years waits the maximum, zero or a second the minimum', () => {
    const now = Date.UTC(2026, 0, 1);
    const tenYears = headerHintMs({ 'cache-control': 'public, max-age=315360000' }, now);
    expect(tenYears).toBe(315_360_000_000);
    const expiresFar = headerHintMs({ expires: 'Thu, 01 Jan 2099 00:00:00 GMT', date: new Date(now).toUTCString() }, now);
    for (const hintMs of [tenYears, expiresFar]) {
      expect(nextSchedule({ policy, previousMs: undefined, changed: true, hintMs }).intervalMs).toBe(policy.maxMs);
      // Every later visit too: revisited every --revisit-max, never starved.
      const { history } = nextSchedule({ policy, previousMs: undefined, changed: true, hintMs });
      expect(nextSchedule({ policy, previousMs: policy.maxMs, history, elapsedMs: policy.maxMs, changed: true, hintMs }).intervalMs).toBe(policy.maxMs);
    }
    // max-age=0, no-cache and an Expires in the past are no hint; a second is below the minimum.
    expect(headerHintMs({ 'cache-control': 'max-age=0' }, now)).toBeUndefined();
    expect(headerHintMs({ 'cache-control': 'no-cache, max-age=600' }, now)).toBeUndefined();
    expect(headerHintMs({ expires: 'Thu, 01 Jan 1970 00:00:00 GMT' }, now)).toBeUndefined();
    expect(headerHintMs({ expires: '0' }, now)).toBeUndefined();
    const second = headerHintMs({ 'cache-control': 'max-age=1' }, now);
    expect(second).toBe(1_000);
    let { intervalMs, history } = nextSchedule({ policy, previousMs: undefined, changed: true, hintMs: second });
    for (let i = 0; i < 20; i += 1) {
      expect(intervalMs).toBeGreaterThanOrEqual(policy.minMs);
      ({ intervalMs, history } = nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed: true, hintMs: second }));
    }
    // Once the header stops lying, the page's own history decides within a few visits.
    ({ intervalMs, history } = nextSchedule({ policy, previousMs: undefined, changed: true, hintMs: tenYears }));
    for (let i = 0; i < 5; i += 1) ({ intervalMs, history } = nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed: true }));
    expect(intervalMs).toBeLessThan(policy.maxMs / 4);
    expect(hintFloor(policy, 1, 0)).toBe(policy.minMs);
    expect(hintFloor(policy, 10_000, Number.POSITIVE_INFINITY)).toBe(policy.maxMs);
    expect(hintFloor(policy, 10_000, 20_000)).toBe(20_000);
  });

  it('revisits a hub (a page whose changes change its links) sooner than a page whose text changes as often', () => {
    // Both pages change every 30 s; the hub's changes bring new links, the other's new text only.
    const follow = (hub: boolean, seconds: number) => {
      let { intervalMs, history } = nextSchedule({ policy, previousMs: undefined, changed: true });
      let at = 0;
      let version = 0;
      let wasHub = false;
      const intervals: number[] = [];
      while (at + intervalMs < seconds * 1000) {
        at += intervalMs;
        const changed = Math.floor(at / 30_000) !== version;
        version = Math.floor(at / 30_000);
        // The link sets a worker would compare: the hub's differ at each change, the other's never.
        wasHub = isHub({ changed, before: 1, after: hub ? 2 : 1, wasHub });
        ({ intervalMs, history } = nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed, linksChanged: wasHub }));
        intervals.push(intervalMs);
      }
      return intervals;
    };
    const hub = follow(true, 3_600);
    const text = follow(false, 3_600);
    expect(hub.length).toBeGreaterThan(text.length * 1.5);
    const late = (list: number[]) => median(list.slice(list.length / 2));
    expect(late(hub)).toBeLessThan(late(text));
    expect(late(hub)).toBeGreaterThanOrEqual(Math.max(policy.minMs, late(text) * HUB_FACTOR * 0.8));
    for (const interval of hub) expect(interval).toBeGreaterThanOrEqual(policy.minMs);
    // The factor on one interval, held to the minimum; a fixed interval has no hubs.
    const history = { changes: 2, unchangedMs: 60_000, changedMs: 60_000 };
    const plain = nextSchedule({ policy, previousMs: 10_000, history, elapsedMs: 10_000, changed: true }).intervalMs;
    expect(nextSchedule({ policy, previousMs: 10_000, history, elapsedMs: 10_000, changed: true, linksChanged: true }).intervalMs).toBe(Math.max(policy.minMs, plain * HUB_FACTOR));
    expect(nextSchedule({ policy: { mode: 45_000, minMs: 1, maxMs: 2 }, previousMs: 45_000, changed: true, linksChanged: true }).intervalMs).toBe(45_000);
  });
});

const links = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `https://news.test/article/${from + i}`);

describe("a page's link set", () => {
  it('hashes the set: order and repeats do not count, a link added, removed or replaced does', () => {
    const page = links(0, 50);
    const hash = linkSetHash(page);
    expect(hash).toBeGreaterThanOrEqual(0);
    expect(hash).toBeLessThan(256);
    expect(linkSetHash([...page].reverse())).toBe(hash);
    expect(linkSetHash([...page, ...page.slice(0, 10)])).toBe(hash);
    expect(linkSetHash([...page, 'https://news.test/article/new'])).not.toBe(hash);
    expect(linkSetHash(page.slice(1))).not.toBe(hash);
    expect(linkSetHash([...page.slice(1), 'https://news.test/article/replacement'])).not.toBe(hash);
    // No links: no set (no hub, nothing kept).
    expect(linkSetHash([])).toBeUndefined();
  });

  it('tells a front page whose list moves on from one that keeps it, over a huge list, at once', () => {
    // 5,000 links (the default --max-links-per-page), the list sliding by one article a version.
    const versions = Array.from({ length: 200 }, (_, v) => linkSetHash(links(v, v + 5_000)));
    // 8 bits: a change keeps the hash about once in 256 (it then counts as a change of text only).
    const kept = versions.filter((hash, v) => v > 0 && hash === versions[v - 1]).length;
    expect(kept).toBeLessThanOrEqual(3);
    // The same list again: the same hash, in any order.
    expect(linkSetHash(links(0, 5_000).reverse())).toBe(versions[0]);
  });

  it('calls a page a hub when its change changed its links, and keeps the verdict over visits that find no change', () => {
    expect(isHub({ changed: true, before: 1, after: 2, wasHub: false })).toBe(true);
    expect(isHub({ changed: true, before: 1, after: 1, wasHub: true })).toBe(false);
    expect(isHub({ changed: false, before: 1, after: undefined, wasHub: true })).toBe(true);
    expect(isHub({ changed: false, before: 1, after: undefined, wasHub: false })).toBe(false);
    // Nothing to compare with (links first seen, or none now): no hub.
    expect(isHub({ changed: true, before: undefined, after: 2, wasHub: true })).toBe(false);
    expect(isHub({ changed: true, before: 1, after: undefined, wasHub: true })).toBe(false);
  });
});
