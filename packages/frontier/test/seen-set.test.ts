import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { urlFingerprint } from '@crawlq/urls';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BLOOM_BLOCK_BITS,
  FrontierArgumentError,
  SeenSet,
  SeenSetMismatchError,
  bloomFalsePositiveRate,
  bloomGeometry,
  frontierKeys,
  type SeenSetMode,
} from '../src/index.js';

let redis: TestRedis;
let client: Redis;

beforeAll(async () => {
  redis = await startTestRedis();
  client = redis.client();
});
afterAll(async () => redis.stop());

const fingerprints = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => urlFingerprint(`https://host-${i % 97}.test/${prefix}/${i}`));

/** Keys under `pattern`, by SCAN (never KEYS on a server others may share). */
async function scanKeys(pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

async function markInBatches(seen: SeenSet, all: readonly string[]): Promise<number> {
  let added = 0;
  for (let i = 0; i < all.length; i += 5000) added += await seen.mark(all.slice(i, i + 5000));
  return added;
}

describe('bloomGeometry', () => {
  it('follows m = -n ln p / (ln 2)^2 and k = round(m / n ln 2), plus the blocked filter allowance', () => {
    const n = 10_000_000;
    const classic = (-n * Math.log(0.001)) / Math.LN2 ** 2;
    const geometry = bloomGeometry(n, 0.001);
    expect(geometry.hashes).toBe(10);
    expect(geometry.bits).toBeGreaterThanOrEqual(classic);
    expect(geometry.bits).toBeLessThan(classic * 1.12);
    expect(geometry.bits % BLOOM_BLOCK_BITS).toBe(0);
    expect(bloomFalsePositiveRate(geometry, n)).toBeLessThanOrEqual(0.001);
  });

  it('splits a filter over bitmaps of at most maxPartBits, whole blocks each', () => {
    const geometry = bloomGeometry(10_000_000_000, 0.001);
    expect(geometry.parts).toBeGreaterThan(200);
    expect(geometry.partBits).toBeLessThanOrEqual(64 * 1024 * 1024 * 8);
    expect(geometry.partBits % BLOOM_BLOCK_BITS).toBe(0);
    expect(geometry.parts * geometry.partBits).toBe(geometry.bits);
  });

  it('refuses unusable numbers', () => {
    expect(() => bloomGeometry(0, 0.001)).toThrow(FrontierArgumentError);
    expect(() => bloomGeometry(1000, 0)).toThrow(FrontierArgumentError);
    expect(() => bloomGeometry(1000, 0.5)).toThrow(FrontierArgumentError);
    expect(() => bloomGeometry(1000, 0.01, 100)).toThrow(/maxPartBits/);
  });
});

describe('SeenSet, exact mode', () => {
  it('never reports a fresh fingerprint as seen and finds every marked one, across many bucket splits', async () => {
    const namespace = `t-${randomUUID()}`;
    const seen = new SeenSet({ redis: client, namespace });
    const inserted = fingerprints('in', 200_000);
    const fresh = fingerprints('out', 200_000);
    expect(await markInBatches(seen, inserted)).toBe(200_000);
    expect((await seen.has(inserted)).every(Boolean)).toBe(true);
    expect((await seen.has(fresh)).some(Boolean)).toBe(false);
    // Marking again adds nothing.
    expect(await seen.mark(inserted.slice(0, 1000))).toBe(0);

    const info = await seen.describe();
    expect(info).toMatchObject({ mode: 'exact', urls: 200_000 });
    // Linear hashing kept about 40 per bucket...
    const buckets = await scanKeys(`${frontierKeys(namespace).seen}:x:*`);
    expect(info?.mode === 'exact' && info.buckets).toBe(buckets.length);
    expect(buckets.length).toBeGreaterThan(200_000 / 80);
    expect(buckets.length).toBeLessThanOrEqual(200_000 / 40 + 1);
    // ...so every bucket is still a compact listpack.
    const encodings = new Set(await Promise.all(buckets.slice(0, 500).map((key) => client.object('ENCODING', key))));
    expect([...encodings]).toEqual(['listpack']);
  });

  it('claim is atomic and remembers its owner', async () => {
    const seen = new SeenSet({ redis: client, namespace: `t-${randomUUID()}` });
    const [a, b] = fingerprints('claim', 2) as [string, string];
    await expectClaimsAtomicPerOwner(seen, a, b);
    expect(await seen.claim(b)).toBe(false);
    // A plain mark keeps the claim's owner.
    await seen.mark([b]);
    expect(await seen.claim(b, 'job-1')).toBe(true);
  });

  it('refuses a fingerprint that is not one', async () => {
    const seen = new SeenSet({ redis: client, namespace: `t-${randomUUID()}` });
    await expect(seen.mark(['http://a.test/'])).rejects.toThrow(FrontierArgumentError);
  });
});

/** Both modes: one winner among concurrent claims of `a`; `b` claimed again by its owner wins, by another loses. */
async function expectClaimsAtomicPerOwner(seen: SeenSet, a: string, b: string): Promise<void> {
  const results = await Promise.all(Array.from({ length: 10 }, () => seen.claim(a)));
  expect(results.filter(Boolean)).toHaveLength(1);
  expect(await seen.claim(b, 'job-1')).toBe(true);
  expect(await seen.claim(b, 'job-1')).toBe(true);
  expect(await seen.claim(b, 'job-2')).toBe(false);
}

describe('SeenSet, bloom mode', () => {
  it('keeps the measured false-positive rate near the configured one (200,000 in, 200,000 fresh)', async () => {
    const mode: SeenSetMode = { mode: 'bloom', expectedUrls: 200_000, falsePositiveRate: 0.001, maxPartBits: 1 << 17 };
    const namespace = `t-${randomUUID()}`;
    const seen = new SeenSet({ redis: client, namespace, mode });
    const inserted = fingerprints('in', 200_000);
    const fresh = fingerprints('out', 200_000);
    await markInBatches(seen, inserted);
    // No false negatives, ever.
    expect((await seen.has(inserted)).every(Boolean)).toBe(true);
    const falsePositives = (await seen.has(fresh)).filter(Boolean).length;
    // 0.001 of 200,000 = 200 expected; the bounds are many standard deviations (about 14) wide.
    expect(falsePositives).toBeLessThan(3 * 0.001 * 200_000);
    expect(falsePositives).toBeGreaterThan(0.001 * 200_000 / 3);

    // The filter really is split over several bitmap keys of the configured size.
    const geometry = bloomGeometry(200_000, 0.001, 1 << 17);
    expect(geometry.parts).toBeGreaterThan(10);
    const parts = await scanKeys(`${frontierKeys(namespace).seen}:b:*`);
    expect(parts).toHaveLength(geometry.parts);
    for (const key of parts.slice(0, 5)) expect(await client.strlen(key)).toBe(geometry.partBits / 8);
    const info = await seen.describe();
    expect(info).toMatchObject({ mode: 'bloom', geometry, expectedUrls: 200_000, falsePositiveRate: 0.001 });
    expect(info?.urls).toBeGreaterThan(199_000);
  });

  it('uses the geometry stored by the first process, whatever a later one was configured with', async () => {
    const namespace = `t-${randomUUID()}`;
    const first = new SeenSet({ redis: client, namespace, mode: { mode: 'bloom', expectedUrls: 10_000, falsePositiveRate: 0.01 } });
    const later = new SeenSet({ redis: client, namespace, mode: { mode: 'bloom', expectedUrls: 50_000, falsePositiveRate: 0.0001 } });
    const some = fingerprints('geo', 2000);
    await first.mark(some);
    expect((await later.has(some)).every(Boolean)).toBe(true);
    expect((await later.describe())?.mode === 'bloom' && (await later.describe())).toMatchObject({ expectedUrls: 10_000 });
  });

  it('claim: first caller wins, the same owner again too, a false positive errs towards fetching', async () => {
    const seen = new SeenSet({ redis: client, namespace: `t-${randomUUID()}`, mode: { mode: 'bloom', expectedUrls: 10_000, falsePositiveRate: 0.001 } });
    const [a, b] = fingerprints('claim', 2) as [string, string];
    await expectClaimsAtomicPerOwner(seen, a, b);
    expect(await seen.has([a, b])).toEqual([true, true]);
  });
});

describe('SeenSet modes do not mix', () => {
  it('refuses a bloom process on an exact crawl and the other way round', async () => {
    const exactNs = `t-${randomUUID()}`;
    await new SeenSet({ redis: client, namespace: exactNs }).mark(fingerprints('m', 3));
    const bloom = new SeenSet({ redis: client, namespace: exactNs, mode: { mode: 'bloom', expectedUrls: 1000, falsePositiveRate: 0.01 } });
    const error = await bloom.has(fingerprints('m', 1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SeenSetMismatchError);
    expect(error).toMatchObject({ configured: 'bloom', stored: "'exact'", retryable: false });

    const bloomNs = `t-${randomUUID()}`;
    await new SeenSet({ redis: client, namespace: bloomNs, mode: { mode: 'bloom', expectedUrls: 1000, falsePositiveRate: 0.01 } }).mark(fingerprints('m', 3));
    await expect(new SeenSet({ redis: client, namespace: bloomNs }).claim(fingerprints('m', 1)[0]!)).rejects.toBeInstanceOf(SeenSetMismatchError);
  });

  it('refuses the seen-set layout of an older crawlq (one big SET)', async () => {
    const namespace = `t-${randomUUID()}`;
    await client.sadd(frontierKeys(namespace).seen, fingerprints('old', 1)[0]!);
    await expect(new SeenSet({ redis: client, namespace }).mark(fingerprints('new', 1))).rejects.toMatchObject({
      name: 'SeenSetMismatchError',
      stored: expect.stringContaining('set') as unknown,
    });
  });
});
