import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revisitBuckets, RevisitStore, type RevisitRecord } from '../src/index.js';

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startTestRedis();
  client = redis.client();
});
afterAll(async () => {
  await redis.stop();
});

const base = (url: string, now: number, intervalMs: number): RevisitRecord => ({
  url,
  now,
  intervalMs,
  changed: true,
  signature: '0123456789abcdef',
  lastModified: Date.UTC(2026, 0, 1),
  etag: '"v1"',
  misses: 0,
  depth: 2,
  retire: false,
  outcome: 'first',
  bytesSaved: 0,
  bodyBytes: 5_000,
});

describe('RevisitStore', () => {
  it('stores compact state, pops a URL once when due (leased), and drops stale wheel entries', async () => {
    const store = new RevisitStore({ redis: client, namespace: `rv-${randomUUID()}`, buckets: revisitBuckets(1_000) });
    const url = 'http://127.0.0.1/a';
    const now = Date.now();
    await store.record(base(url, now, 5_000));
    const state = await store.read(url);
    // An ETag is kept without the Last-Modified (If-None-Match takes precedence); the body size within 5%.
    expect(state).toMatchObject({ signature: '0123456789abcdef', etag: '"v1"', lastModified: undefined, depth: 2, misses: 0, intervalMs: 5_000, leased: false });
    expect(Math.abs((state?.bodyBytes ?? 0) - 5_000)).toBeLessThanOrEqual(250);
    expect(state?.dueAt).toBeGreaterThanOrEqual(now + 5_000);
    expect(state?.dueAt).toBeLessThanOrEqual(now + 5_100);
    // Rescheduled before it was due: the first wheel entry is stale now.
    await store.record({ ...base(url, now, 8_000), changed: false, outcome: 'notModified' });
    expect((await store.pop({ now: now + 6_000, max: 10, leaseMs: 60_000 })).urls).toEqual([]);
    const due = await store.pop({ now: now + 9_000, max: 10, leaseMs: 60_000 });
    expect(due.urls).toEqual([{ url, depth: 2 }]);
    // Leased: not due again until the lease ends, and then once.
    expect((await store.pop({ now: now + 20_000, max: 10, leaseMs: 60_000 })).urls).toEqual([]);
    expect((await store.pop({ now: now + 70_000, max: 10, leaseMs: 60_000 })).urls).toEqual([{ url, depth: 2 }]);
    expect(await store.audit()).toMatchObject({ missing: 0, duplicated: 0, live: 1 });
    expect(await store.counters()).toMatchObject({ known: 1, first: 1, notModified: 1, leased: 2 });
  });

  it('a far due time waits in a wide slot and still comes due on time; a retired URL is gone', async () => {
    const store = new RevisitStore({ redis: client, namespace: `rv-${randomUUID()}`, buckets: revisitBuckets(1_000) });
    const now = Date.now();
    await store.record(base('http://127.0.0.1/far', now, 5 * 3_600_000));
    await store.record(base('http://127.0.0.1/gone', now, 1_000));
    await store.record({ ...base('http://127.0.0.1/gone', now, 1_000), retire: true, outcome: 'gone' });
    expect((await store.pop({ now: now + 4 * 3_600_000, max: 10, leaseMs: 1_000 })).urls).toEqual([]);
    expect((await store.pop({ now: now + 5 * 3_600_000 - 60_000, max: 10, leaseMs: 1_000 })).urls).toEqual([]);
    // Intervals are stored to 1/1024 (rounded up: never early), so 5 h comes due within 18 s after.
    const state = await store.read('http://127.0.0.1/far');
    expect(state?.dueAt).toBeGreaterThanOrEqual(now + 5 * 3_600_000);
    expect(state?.dueAt).toBeLessThanOrEqual(now + 5 * 3_600_000 + 18_000);
    expect((await store.pop({ now: (state?.dueAt ?? 0) - 1_000, max: 10, leaseMs: 1_000 })).urls).toEqual([]);
    // Near slots are 1 s wide and end at or after the due time.
    expect((await store.pop({ now: (state?.dueAt ?? 0) + 1_100, max: 10, leaseMs: 1_000 })).urls.map(({ url }) => url)).toEqual(['http://127.0.0.1/far']);
    expect(await store.read('http://127.0.0.1/gone')).toBeUndefined();
    expect(await store.counters()).toMatchObject({ known: 1, retired: 1, first: 2, gone: 1, fetched: 3 });
  });

  it("keeps a URL's archived response beside its state: replaced when given, kept when not, gone with a retired URL", async () => {
    const namespace = `rv-${randomUUID()}`;
    const store = new RevisitStore({ redis: client, namespace, buckets: revisitBuckets(1_000) });
    const url = 'http://127.0.0.1/archived';
    const now = Date.now();
    await store.record(base('http://127.0.0.1/plain', now, 5_000));
    expect((await store.read('http://127.0.0.1/plain'))?.archived).toBeUndefined();
    // Binary, with bytes Lua strings and hex must carry intact (NUL, high bytes).
    const first = Buffer.from([0, 1, 255, 128, 10, 13, ...Buffer.from('x'.repeat(48))]);
    await store.record({ ...base(url, now, 5_000), archived: first });
    expect((await store.read(url))?.archived).toEqual(first);
    // A 54-byte value stays in Redis' compact hash encoding.
    const keys = await client.keys(`*${namespace}*rv:a:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(await client.object('ENCODING', key)).toBe('listpack');
    await store.record({ ...base(url, now + 5_000, 5_000), changed: false, outcome: 'notModified' });
    expect((await store.read(url))?.archived).toEqual(first);
    const second = Buffer.from('second capture');
    await store.record({ ...base(url, now + 10_000, 5_000), archived: second });
    expect((await store.read(url))?.archived).toEqual(second);
    await store.record({ ...base(url, now + 15_000, 5_000), retire: true, outcome: 'gone' });
    expect(await store.read(url)).toBeUndefined();
    expect(await client.keys(`*${namespace}*rv:a:*`)).toEqual([]);
    await store.record(base(url, now + 20_000, 5_000));
    expect((await store.read(url))?.archived).toBeUndefined();
  });

  it("keeps a page's link-set hash and hub flag within Redis' 64-byte compact value: beside an ETag of up to 37 bytes, not beside a longer one", async () => {
    const namespace = `rv-${randomUUID()}`;
    const store = new RevisitStore({ redis: client, namespace, buckets: revisitBuckets(1_000) });
    const now = Date.now();
    const cases = [
      { url: 'http://127.0.0.1/no-validator', etag: undefined, lastModified: undefined, kept: true },
      { url: 'http://127.0.0.1/last-modified', etag: undefined, lastModified: Date.UTC(2026, 0, 1), kept: true },
      { url: 'http://127.0.0.1/etag-36', etag: `"${'a'.repeat(34)}"`, lastModified: undefined, kept: true },
      { url: 'http://127.0.0.1/etag-37', etag: `"${'a'.repeat(35)}"`, lastModified: undefined, kept: true },
      { url: 'http://127.0.0.1/etag-38', etag: `"${'a'.repeat(36)}"`, lastModified: undefined, kept: false },
    ];
    for (const { url, etag, lastModified } of cases) await store.record({ ...base(url, now, 5_000), etag, lastModified, links: 0xbe, hub: true });
    for (const { url, etag, lastModified, kept } of cases) {
      const state = await store.read(url);
      // The validator always survives; the hash only where it fits. The hub flag costs no byte.
      expect(state, url).toMatchObject({ etag, lastModified, links: kept ? 0xbe : undefined, hub: true });
    }
    for (const key of await client.keys(`*${namespace}*rv:s:*`)) expect(await client.object('ENCODING', key)).toBe('listpack');
    // A lease (the pop script rewrites the state) keeps both; a record without them drops them.
    const url = 'http://127.0.0.1/last-modified';
    expect((await store.pop({ now: now + 6_000, max: 10, leaseMs: 60_000 })).urls.map((due) => due.url)).toContain(url);
    expect(await store.read(url)).toMatchObject({ leased: true, links: 0xbe, hub: true, lastModified: Date.UTC(2026, 0, 1) });
    await store.record({ ...base(url, now + 7_000, 5_000), etag: undefined });
    expect(await store.read(url)).toMatchObject({ links: undefined, hub: false, lastModified: Date.UTC(2026, 0, 1) });
    expect(await store.audit()).toMatchObject({ missing: 0, duplicated: 0 });
  });

  it("applies a sitemap's hints: a lastmod newer than the last fetch makes a known URL due now (not before its minimum), an older one does not; a new URL keeps its prior until its first fetch", async () => {
    const namespace = `rv-${randomUUID()}`;
    const store = new RevisitStore({ redis: client, namespace, buckets: revisitBuckets(1_000) });
    const fetchedAt = Date.now() - 60_000;
    const now = fetchedAt + 60_000;
    const hour = 3_600_000;
    for (const path of ['newer', 'older', 'leased', 'recent', 'future']) await store.record(base(`http://127.0.0.1/${path}`, fetchedAt, 10 * hour));
    // Fetched a second before "now", with a minimum of 5 s: due 4 s from now, not at once.
    await store.record(base('http://127.0.0.1/recent', now - 1_000, 10 * hour));
    await store.record(base('http://127.0.0.1/leased', now - 2 * hour, 1_000));
    expect((await store.pop({ now, max: 10, leaseMs: 10 * hour })).urls.map((due) => due.url)).toEqual(['http://127.0.0.1/leased']);
    const made = await store.hint(
      [
        { url: 'http://127.0.0.1/newer', lastModified: fetchedAt + 1_000, minIntervalMs: 5_000 },
        { url: 'http://127.0.0.1/older', lastModified: fetchedAt - 1_000, minIntervalMs: 5_000 },
        { url: 'http://127.0.0.1/leased', lastModified: now, minIntervalMs: 5_000 },
        { url: 'http://127.0.0.1/recent', lastModified: now, minIntervalMs: 5_000 },
        { url: 'http://127.0.0.1/future', lastModified: now + 365 * 24 * hour, minIntervalMs: 5_000 },
        // A known URL's prior is not kept: its visits say more.
        { url: 'http://127.0.0.1/older', minIntervalMs: 5_000, priorMs: 24 * hour },
        { url: 'http://127.0.0.1/new', minIntervalMs: 5_000, priorMs: 24 * hour },
        { url: 'http://127.0.0.1/never', minIntervalMs: 5_000, priorMs: Number.POSITIVE_INFINITY },
      ],
      now,
    );
    expect(made).toBe(3);
    // Times are kept in tenths of a second.
    expect((await store.read('http://127.0.0.1/newer'))?.dueAt).toBeLessThanOrEqual(now + 100);
    expect((await store.read('http://127.0.0.1/future'))?.dueAt).toBeLessThanOrEqual(now + 100);
    expect((await store.read('http://127.0.0.1/older'))?.dueAt).toBeGreaterThanOrEqual(fetchedAt + 10 * hour);
    const recent = await store.read('http://127.0.0.1/recent');
    expect(recent?.dueAt).toBeGreaterThanOrEqual(now - 1_000 + 5_000);
    expect(recent?.dueAt).toBeLessThanOrEqual(now - 1_000 + 5_100);
    expect((await store.read('http://127.0.0.1/leased'))?.leased).toBe(true);
    // Due now: popped at the next look (wheel slots are 1 s wide), the recent one once its minimum has passed.
    expect((await store.pop({ now: now + 1_000, max: 10, leaseMs: 60_000 })).urls.map((due) => due.url).sort()).toEqual(['http://127.0.0.1/future', 'http://127.0.0.1/newer']);
    expect((await store.pop({ now: now + 2_000, max: 10, leaseMs: 60_000 })).urls).toEqual([]);
    expect((await store.pop({ now: now + 5_100, max: 10, leaseMs: 60_000 })).urls.map((due) => due.url)).toEqual(['http://127.0.0.1/recent']);
    expect(await store.audit()).toMatchObject({ missing: 0, duplicated: 0 });
    // The new URLs' priors, read by their first fetch; recording it consumes the prior.
    // Kept as an interval is (to 1/1024).
    const prior = await store.lookup('http://127.0.0.1/new');
    expect(prior.state).toBeUndefined();
    expect(Math.abs((prior.priorMs ?? 0) / (24 * hour) - 1)).toBeLessThan(1 / 1024);
    expect((await store.lookup('http://127.0.0.1/never')).priorMs).toBeGreaterThan(1_000 * 365 * 24 * hour);
    expect((await store.lookup('http://127.0.0.1/older')).priorMs).toBeUndefined();
    await store.record(base('http://127.0.0.1/new', now, 5_000));
    expect(await store.lookup('http://127.0.0.1/new')).toMatchObject({ priorMs: undefined, state: { intervalMs: 5_000 } });
    await store.record({ ...base('http://127.0.0.1/never', now, 5_000), retire: true, outcome: 'gone' });
    expect(await client.keys(`*${namespace}*rv:h:*`)).toEqual([]);
  });
});
