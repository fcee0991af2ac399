import { describe, expect, it } from 'vitest';
import { isHub, linkSetHash } from '../src/revisit/link-set.js';

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
