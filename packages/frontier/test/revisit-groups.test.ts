import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRevisitGroups, readRevisitProgress, readTopRevisitGroups, revisitBuckets, RevisitSchedule, RevisitStore, type RevisitRecord } from '../src/index.js';

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startTestRedis();
  client = redis.client();
});
afterAll(async () => {
  await redis.stop();
});

const groupOf = (url: string) => new URL(url).host;

const fetched = (now: number, intervalMs: number, outcome: RevisitRecord['outcome']): Omit<RevisitRecord, 'url' | 'group'> => ({
  now,
  intervalMs,
  changed: outcome === 'first' || outcome === 'changed',
  signature: '0123456789abcdef',
  lastModified: undefined,
  etag: '"v1"',
  misses: outcome === 'gone' ? 3 : 0,
  depth: 1,
  retire: outcome === 'gone',
  outcome,
  bytesSaved: outcome === 'notModified' ? 4_096 : 0,
  bodyBytes: 4_096,
});

async function hincrbyCalls(): Promise<number> {
  return Number(/cmdstat_hincrby:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
}

describe('per-group revisit figures', () => {
  it("counts each group's outcomes where its fetches were recorded, and its due URLs from the schedule's wheel, summing to the fleet's", async () => {
    const namespaces = [`rvg-${randomUUID()}`, `rvg-${randomUUID()}`];
    const schedule = new RevisitSchedule({ redis: client, namespaces, expectedUrls: 1_000, groupOf });
    const now = Date.now();
    // a.test: 3 URLs, then a changed revisit, a 304 and a 200 unchanged; b.test: 2 URLs, one retired; c.test: one URL due in two hours.
    const plan: [string, number, RevisitRecord['outcome'][]][] = [
      ['http://a.test/1', 1_000, ['first', 'changed']],
      ['http://a.test/2', 1_000, ['first', 'notModified']],
      ['http://a.test/3', 1_800_000, ['first', 'unchanged']],
      ['http://b.test/1', 600_000, ['first']],
      ['http://b.test/2', 600_000, ['first', 'gone']],
      ['http://c.test/1', 7_200_000, ['first']],
    ];
    for (const [url, intervalMs, outcomes] of plan) {
      for (const [i, outcome] of outcomes.entries()) await (await schedule.known(url)).record(fetched(now - 10_000 + i * 5_000, intervalMs, outcome));
    }
    const read = await readRevisitGroups(client, namespaces, { now, groupOf });
    expect(read.dueComplete).toBe(true);
    const by = new Map(read.groups.map((figures) => [figures.group, figures]));
    // Due counts are schedule entries, as the fleet's: a rescheduled URL's older entry counts until it is popped (each a.test URL has two).
    expect(by.get('a.test')).toEqual({ group: 'a.test', known: 3, first: 3, changed: 1, unchanged: 1, notModified: 1, gone: 0, bytesSaved: 4_096, retired: 0, dueNow: 4, dueNextHour: 6 });
    expect(by.get('b.test')).toMatchObject({ known: 1, first: 2, gone: 1, retired: 1, dueNow: 0, dueNextHour: 2 });
    expect(by.get('c.test')).toMatchObject({ known: 1, first: 1, dueNow: 0, dueNextHour: 0 });
    // The groups add up to the fleet's figures.
    const fleet = await readRevisitProgress(client, namespaces, now);
    const sum = (field: 'known' | 'changed' | 'notModified' | 'bytesSaved' | 'dueNow' | 'dueNextHour') => read.groups.reduce((total, figures) => total + (figures[field] ?? 0), 0);
    for (const field of ['known', 'changed', 'notModified', 'bytesSaved', 'dueNow', 'dueNextHour'] as const) expect(sum(field), field).toBe(fleet[field]);

    // The gauges' read: the groups with the most known URLs, their counters as the full read has them.
    const top = await readTopRevisitGroups(client, namespaces, 2);
    expect(top.map((figures) => figures.group)).toEqual(['a.test', 'b.test']);
    expect(top[0]).toEqual({ ...by.get('a.test'), dueNow: undefined, dueNextHour: undefined });
    // Popping drops the stale entries and leases the due URLs (due again in 10 min): a.test's two are then due within the hour, not now.
    await schedule.release({ now, leaseMs: 600_000 });
    const after = new Map((await readRevisitGroups(client, namespaces, { now, groupOf })).groups.map((figures) => [figures.group, figures]));
    expect(after.get('a.test')).toMatchObject({ dueNow: 0, dueNextHour: 4 });
    // Without groupOf nothing is scanned; with too small a scan budget the due counts are marked incomplete.
    expect((await readRevisitGroups(client, namespaces, { now })).groups.every((figures) => figures.dueNow === undefined)).toBe(true);
    expect((await readRevisitGroups(client, namespaces, { now, groupOf, maxDueEntries: 1 })).dueComplete).toBe(false);
  });

  it('costs a revisit one command more for its group (two for a 304, whose saved bytes count too)', async () => {
    const store = new RevisitStore({ redis: client, namespace: `rvg-${randomUUID()}`, buckets: revisitBuckets(1_000) });
    const now = Date.now();
    const url = 'http://a.test/x';
    await store.record({ ...fetched(now, 1_000, 'first'), url });
    const calls = async (record: RevisitRecord) => {
      const before = await hincrbyCalls();
      await store.record(record);
      return (await hincrbyCalls()) - before;
    };
    for (const outcome of ['changed', 'unchanged', 'notModified'] as const) {
      const without = await calls({ ...fetched(now, 1_000, outcome), url });
      const withGroup = await calls({ ...fetched(now, 1_000, outcome), url, group: 'a.test' });
      expect(withGroup - without, outcome).toBe(outcome === 'notModified' ? 2 : 1);
    }
  });
});
