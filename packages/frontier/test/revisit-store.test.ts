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
});
