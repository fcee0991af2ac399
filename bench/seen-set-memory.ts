// Seen-set benchmark: Redis memory per seen URL in each mode, and enqueue
// throughput through Frontier.addSeeds with dedupe on.
// Alone: node --conditions=@crawlq/source --import tsx bench/seen-set-memory.ts [urls]
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Frontier, SeenSet, bloomGeometry, type SeenSetMode } from '@crawlq/frontier';
import { createGroupLimiter } from '@crawlq/group-limiter';
import { openCrawlQueue } from '@crawlq/queue';
import { gateKeyPrefix } from '@crawlq/redis';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { normalizeUrl, urlFingerprint } from '@crawlq/urls';
import type { Redis } from 'ioredis';
import { fmt } from './support.js';

const ENQUEUE_GOAL = 20_000;
const BATCH = 1000;

/** The same URL shape as the enqueue bench: 1,000 hosts. */
function urlAt(i: number): string {
  return `https://host-${i % 1000}.example/section/${Math.floor(i / 1000)}/page-${i}.html`;
}

async function usedMemory(client: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
}

/**
 * Memory: fingerprints go through SeenSet.mark alone, without the backlog, so
 * the used_memory delta is the seen-set alone. Throughput: Frontier.addSeeds
 * end to end (normalise, then one admit script per batch: dedupe, budgets,
 * mark, append to the backlog) in batches of 1000.
 */
export async function benchSeenSet(log: (line: string) => void, urls = 1_000_000): Promise<void> {
  const fingerprints = Array.from({ length: urls }, (_, i) => urlFingerprint(normalizeUrl(urlAt(i))));
  const count = urls.toLocaleString('en-US');

  await withRedis(async (client) => {
    const before = await usedMemory(client);
    for (let i = 0; i < urls; i += BATCH) await client.sadd('bench:{seen}:legacy', ...fingerprints.slice(i, i + BATCH));
    log(`seen-set: one Redis SET (the old layout), ${count} URLs: ${fmt((await usedMemory(client) - before) / urls)} bytes/URL`);
  });

  const modes: { label: string; mode: SeenSetMode }[] = [
    { label: 'exact', mode: { mode: 'exact' } },
    { label: `bloom sized for ${count} at 0.001`, mode: { mode: 'bloom', expectedUrls: urls, falsePositiveRate: 0.001 } },
  ];
  for (const { label, mode } of modes) {
    await withRedis(async (client) => {
      const seen = new SeenSet({ redis: client, namespace: 'bench-seen', mode });
      const before = await usedMemory(client);
      const started = performance.now();
      for (let i = 0; i < urls; i += BATCH) {
        const batch = fingerprints.slice(i, i + BATCH);
        await seen.mark(batch);
      }
      const seconds = (performance.now() - started) / 1000;
      const bytes = (await usedMemory(client)) - before;
      const info = await seen.describe();
      const shape = info?.mode === 'exact' ? `${info.buckets.toLocaleString('en-US')} hash buckets` : `${info?.geometry.bits.toLocaleString('en-US')} bits, k = ${info?.geometry.hashes}`;
      log(`seen-set: ${label}, ${count} URLs: ${fmt(bytes / urls)} bytes/URL (${fmt(bytes / 1024 / 1024)} MiB; ${shape}); mark ${fmt(urls / seconds, 0)} URLs/s`);
    });
  }
  const sized = bloomGeometry(10_000_000, 0.001);
  log(`seen-set: bloom at the defaults (10,000,000 URLs, 0.001) is ${fmt(sized.bits / 8 / 1024 / 1024)} MiB whatever the crawl's size, k = ${sized.hashes}`);

  for (const { label, mode } of modes) {
    await withRedis(async (client, redis) => {
      const namespace = 'bench-seen-enqueue';
      const queue = openCrawlQueue({ url: redis.url }, namespace);
      const pacer = createGroupLimiter({ redis: client, prefix: gateKeyPrefix(namespace) });
      const frontier = new Frontier({
        redis: client,
        queue,
        pacer,
        namespace,
        settings: {
          scope: 'any', include: [], exclude: [], maxDepth: 5, groupBy: 'host', sortQuery: false,
          jobPolicy: { attempts: 3, backoffMs: 1000 }, seenSet: mode,
        },
      });
      try {
        let accepted = 0;
        const started = performance.now();
        for (let i = 0; i < urls; i += BATCH) {
          accepted += (await frontier.addSeeds(Array.from({ length: Math.min(BATCH, urls - i) }, (_, j) => urlAt(i + j)))).accepted;
        }
        const seconds = (performance.now() - started) / 1000;
        const rate = urls / seconds;
        log(`seen-set: enqueue via Frontier.addSeeds (${label}): ${count} URLs in ${fmt(seconds, 2)} s = ${fmt(rate, 0)} URLs/s, ${fmt(rate / ENQUEUE_GOAL, 2)}x the goal of >= 20,000 (${accepted.toLocaleString('en-US')} accepted)`);

        // All duplicates now: what a crawl pays for links it has seen before.
        const again = Math.min(urls, 100_000);
        let duplicate = 0;
        const repeat = performance.now();
        for (let i = 0; i < again; i += BATCH) {
          duplicate += (await frontier.addSeeds(Array.from({ length: Math.min(BATCH, again - i) }, (_, j) => urlAt(i + j)))).duplicate;
        }
        const repeatRate = again / ((performance.now() - repeat) / 1000);
        log(`seen-set: re-enqueue of ${again.toLocaleString('en-US')} seen URLs (${label}): ${fmt(repeatRate, 0)} URLs/s, ${fmt(repeatRate / ENQUEUE_GOAL, 2)}x the goal (${duplicate.toLocaleString('en-US')} found duplicate)`);
      } finally {
        await queue.close();
      }
    });
  }
  // Other work on the machine slows every figure above: say how busy it was.
  log(`seen-set: load average at the end ${loadavg().map((load) => fmt(load, 2)).join(' / ')} (1 / 5 / 15 min)`);
}

async function withRedis(run: (client: Redis, redis: TestRedis) => Promise<void>): Promise<void> {
  const redis = await startTestRedis();
  try {
    await run(redis.client(), redis);
  } finally {
    await redis.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const urls = Number(process.argv[2] ?? 1_000_000);
  await benchSeenSet((line) => process.stdout.write(`${line}\n`), urls);
}
