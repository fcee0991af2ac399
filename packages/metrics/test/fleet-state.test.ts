import { spawnSync } from 'node:child_process';
import { Frontier } from '@crawlq/frontier';
import { createGroupLimiter } from '@crawlq/group-limiter';
import { openCrawlQueue } from '@crawlq/queue';
import { gateKeyPrefix } from '@crawlq/redis';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetStateReader, registerFleetGauges } from '../src/index.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});

const job = (url: string) => ({ url, depth: 0, group: 'a.test', seed: url });

describe('FleetStateReader (real Redis, real BullMQ queue)', () => {
  it('counts URLs by state, with due = backlog + waiting + delayed within the next minute', async () => {
    const namespace = `fleet-${Date.now()}`;
    const queue = openCrawlQueue({ url: redis.url }, namespace);
    try {
      await queue.add('fetch', job('http://a.test/1'));
      await queue.add('fetch', job('http://a.test/2'));
      await queue.add('fetch', job('http://a.test/3'), { delay: 10_000 });
      await queue.add('fetch', job('http://a.test/4'), { delay: 30_000 });
      await queue.add('fetch', job('http://a.test/5'), { delay: 10 * 60_000 });
      const client = redis.client();
      const reader = new FleetStateReader({ redis: client, namespace, maxAgeMs: 0 });
      expect((await reader.read()).queue).toEqual({ backlog: 0, waiting: 2, delayed: 3, active: 0, due: 4 });
      // Seven URLs admitted into the frontier's backlogs, not yet released as jobs.
      const limiter = createGroupLimiter({ redis: client, prefix: gateKeyPrefix(namespace) });
      const frontier = new Frontier({
        redis: client,
        queue,
        pacer: limiter,
        namespace,
        settings: { scope: 'any', include: [], exclude: [], maxDepth: 1, groupBy: 'host', sortQuery: false, jobPolicy: { attempts: 1, backoffMs: 1 } },
      });
      await frontier.addSeeds(Array.from({ length: 7 }, (_, i) => `http://b.test/${i}`));
      const state = await reader.read();
      expect(state.queue).toEqual({ backlog: 7, waiting: 2, delayed: 3, active: 0, due: 11 });
      expect(state.groups).toEqual({ active: 0, paused: 0, blocked: 0, slowed: 0 });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('counts groups in flight, at their concurrency cap and paused', async () => {
    const namespace = `groups-${Date.now()}`;
    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix(namespace) });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 2 } });
    const first = await limiter.acquire({ group: 'busy.test', leaseId: 'l1' });
    const second = await limiter.acquire({ group: 'busy.test', leaseId: 'l2' });
    const third = await limiter.acquire({ group: 'half.test', leaseId: 'l3' });
    expect([first.admitted, second.admitted, third.admitted]).toEqual([true, true, true]);
    await limiter.pause('paused.test', 60_000, 'test');
    const reader = new FleetStateReader({ redis: redis.client(), namespace, maxAgeMs: 0 });
    expect((await reader.read()).groups).toEqual({ active: 2, paused: 1, blocked: 1, slowed: 0 });
  });

  it('counts groups an adaptive pace slowed down, at the cap the pace leaves them', async () => {
    const namespace = `slowed-${Date.now()}`;
    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix(namespace) });
    await limiter.setPolicy({ defaults: { rate: null, concurrency: 4 }, adaptive: { enabled: true, risePerSecond: 0.0001 } });
    const failed = await limiter.acquire({ group: 'struggling.test', leaseId: 'f1' });
    if (!failed.admitted) throw new Error('not admitted');
    await limiter.release(failed.lease, { status: 503, sent: true });
    // Cap 4 at half pace: two in flight fill it.
    await limiter.acquire({ group: 'struggling.test', leaseId: 's1' });
    await limiter.acquire({ group: 'struggling.test', leaseId: 's2' });
    await limiter.acquire({ group: 'fine.test', leaseId: 'f2' });
    await limiter.acquire({ group: 'fine.test', leaseId: 'f3' });
    const reader = new FleetStateReader({ redis: redis.client(), namespace, maxAgeMs: 0 });
    expect((await reader.read()).groups).toEqual({ active: 2, paused: 0, blocked: 1, slowed: 1 });
  });
});

describe('FleetStateReader: the continuous crawl', () => {
  it('reads known URLs, due now and within the hour, revisit outcomes and bytes saved; the gauges show them', async () => {
    const namespace = `revisit-${Date.now()}`;
    const client = redis.client();
    const queue = openCrawlQueue({ url: redis.url }, namespace);
    try {
      const frontier = new Frontier({
        redis: client,
        queue,
        pacer: createGroupLimiter({ redis: client, prefix: gateKeyPrefix(namespace) }),
        namespace,
        settings: { scope: 'any', include: [], exclude: [], maxDepth: 1, groupBy: 'host', sortQuery: false, jobPolicy: { attempts: 1, backoffMs: 1 } },
      });
      const now = Date.now();
      const fetch = async (url: string, at: number, intervalMs: number, outcome: 'first' | 'changed' | 'notModified' | 'unchanged') => {
        const known = await frontier.revisits.known(url);
        await known.record({
          now: at,
          intervalMs,
          changed: outcome === 'first' || outcome === 'changed',
          signature: '0123456789abcdef',
          lastModified: undefined,
          etag: '"e"',
          misses: 0,
          depth: 1,
          retire: false,
          outcome,
          bytesSaved: outcome === 'notModified' ? 8_000 : 0,
          bodyBytes: 8_000,
        });
      };
      // Due now (fetched 10 s ago, every 5 s), due within the hour (in 30 min), due tomorrow.
      await fetch('http://a.test/now', now - 10_000, 5_000, 'first');
      await fetch('http://a.test/soon', now - 60_000, 60_000, 'first');
      await fetch('http://a.test/soon', now, 1_800_000, 'notModified');
      await fetch('http://b.test/later', now - 60_000, 60_000, 'first');
      await fetch('http://b.test/later', now - 1_000, 86_400_000, 'changed');
      await fetch('http://b.test/same', now, 86_400_000, 'first');
      await fetch('http://b.test/same', now, 86_400_000, 'unchanged');
      const reader = new FleetStateReader({ redis: client, namespace, maxAgeMs: 0 });
      const { revisits } = await reader.read();
      expect(revisits).toMatchObject({ known: 4, first: 4, changed: 1, unchanged: 1, notModified: 1, gone: 0, fetched: 7, retired: 0 });
      // 304s save the last full body (kept within 5%).
      expect(Math.abs(revisits.bytesSaved - 8_000)).toBeLessThanOrEqual(400);
      // Schedule entries: the older entries of rescheduled URLs still count until dropped, so due figures are at least the URLs due.
      expect(revisits.dueNow).toBeGreaterThanOrEqual(1);
      expect(revisits.dueNextHour).toBeGreaterThanOrEqual(2);
      expect(revisits.dueNextHour).toBeGreaterThanOrEqual(revisits.dueNow);
      // Popping drops the stale entries: then the figures are exact.
      await frontier.revisits.release({ now, leaseMs: 600_000 });
      const after = (await reader.read()).revisits;
      expect(after.leased).toBe(1);
      // The leased URL's lease entry is due in 10 min: within the hour, not now.
      expect(after.dueNow).toBe(0);

      const registry = new Registry();
      registerFleetGauges(registry, reader);
      const text = await registry.metrics();
      expect(text).toContain('crawlq_revisit_urls{state="known"} 4');
      expect(text).toContain('crawlq_revisit_fetches{outcome="not_modified"} 1');
      expect(text).toContain('crawlq_revisit_fetches{outcome="changed"} 1');
      expect(text).toMatch(/crawlq_revisit_bytes_saved \d+/);
      // Per group (the groups with the most known URLs): b.test's 2 first fetches, a changed and an unchanged revisit; a.test's 304.
      expect(text).toContain('crawlq_revisit_group_known{group="b.test"} 2');
      expect(text).toContain('crawlq_revisit_group_fetches{group="b.test",outcome="changed"} 1');
      expect(text).toContain('crawlq_revisit_group_fetches{group="b.test",outcome="unchanged"} 1');
      expect(text).toContain('crawlq_revisit_group_fetches{group="a.test",outcome="not_modified"} 1');
      expect(text).toMatch(/crawlq_revisit_group_bytes_saved\{group="a.test"\} \d+/);
      const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text });
      if (promtool.status !== null && !promtool.error) expect(promtool.status, `${promtool.stdout.toString()}${promtool.stderr.toString()}`).toBe(0);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
