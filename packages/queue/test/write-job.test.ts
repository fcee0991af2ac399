import { randomUUID } from 'node:crypto';
import { defineLuaScript, luaFiles, REDIS_LUA } from '@crawlq/redis';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRAWL_JOB_NAME, crawlJobOptions, crawlJobOptionsJson, crawlJobWriteKeys, openCrawlQueue, openWorker, QUEUE_LUA, QUEUE_NAMES, type CrawlJobData } from '../src/index.js';

// A minimal caller of the include: KEYS = the 9 queue keys; ARGV = job prefix, id, data, opts, priority.
const writeScript = defineLuaScript({
  name: 'test-write-crawl-job',
  keys: 9,
  file: luaFiles({
    package: '@crawlq/queue-test',
    root: new URL('.', import.meta.url),
    uses: [REDIS_LUA, QUEUE_LUA],
    made: {
      'write.lua': `
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/queue/lua/write-crawl-job.lua"
local keys = {}
for i = 1, 9 do keys[i] = KEYS[i] end
return write_crawl_job(keys, ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), math.floor(now_ms()))
`,
    },
  }).file('write.lua'),
});

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

const policy = { attempts: 3, backoffMs: 500 };

describe('write_crawl_job (BullMQ addPrioritizedJob inside a crawlq script)', () => {
  it('writes the job Queue.add writes: same name, data, options, priority, and a worker takes it', async () => {
    const namespace = `w-${randomUUID()}`;
    const written = openCrawlQueue({ url: redis.url }, namespace);
    const added = openCrawlQueue({ url: redis.url }, `a-${randomUUID()}`);
    const client = redis.client();
    try {
      const data: CrawlJobData = { url: 'http://a.test/x?y=1', depth: 2, group: 'a.test' };
      const { queueKeys, jobPrefix } = crawlJobWriteKeys(written);
      const id = await writeScript.run(client, queueKeys, [jobPrefix, 'uSameIdForBothQueues00', JSON.stringify(data), crawlJobOptionsJson(policy), 3]);
      expect(id).toBe('uSameIdForBothQueues00');
      await added.add(CRAWL_JOB_NAME, data, { ...crawlJobOptions(policy), jobId: 'uSameIdForBothQueues00', priority: 3 });

      const [ours, theirs] = await Promise.all([written.getJob('uSameIdForBothQueues00'), added.getJob('uSameIdForBothQueues00')]);
      expect(ours).toBeDefined();
      for (const field of ['name', 'data', 'opts', 'priority', 'delay', 'attemptsMade'] as const) {
        expect(ours?.[field], field).toEqual(theirs?.[field]);
      }
      expect(await written.getJobState('uSameIdForBothQueues00')).toBe('prioritized');
      expect(await written.getJobCounts('prioritized')).toEqual(await added.getJobCounts('prioritized'));
      // The raw hashes hold the same fields (values differ only in the timestamp).
      const rawOurs = await client.hgetall(`${jobPrefix}uSameIdForBothQueues00`);
      const rawTheirs = await client.hgetall(`${crawlJobWriteKeys(added).jobPrefix}uSameIdForBothQueues00`);
      expect(Object.keys(rawOurs).sort()).toEqual(Object.keys(rawTheirs).sort());
      expect({ ...rawOurs, timestamp: 0 }).toEqual({ ...rawTheirs, timestamp: 0 });

      const seen: CrawlJobData[] = [];
      const worker = openWorker<CrawlJobData>(QUEUE_NAMES.crawl, (job) => {
        seen.push(job.data);
        return Promise.resolve();
      }, { connection: { url: redis.url }, namespace });
      try {
        await expect.poll(() => seen.length, { timeout: 20_000 }).toBe(1);
        expect(seen[0]).toEqual(data);
      } finally {
        await worker.close();
      }
    } finally {
      client.disconnect();
      await Promise.all([written.obliterate({ force: true }), added.obliterate({ force: true })]);
      await Promise.all([written.close(), added.close()]);
    }
  });

  it('leaves an existing job with the same id untouched', async () => {
    const queue = openCrawlQueue({ url: redis.url }, `d-${randomUUID()}`);
    const client = redis.client();
    try {
      const { queueKeys, jobPrefix } = crawlJobWriteKeys(queue);
      const first: CrawlJobData = { url: 'http://a.test/first', depth: 0, group: 'a.test' };
      await writeScript.run(client, queueKeys, [jobPrefix, 'uDuplicateId0000000000', JSON.stringify(first), crawlJobOptionsJson(policy), 1]);
      await writeScript.run(client, queueKeys, [jobPrefix, 'uDuplicateId0000000000', JSON.stringify({ ...first, url: 'http://a.test/second' }), crawlJobOptionsJson(policy), 1]);
      expect((await queue.getJob('uDuplicateId0000000000'))?.data).toEqual(first);
      expect(await queue.getJobCounts('prioritized')).toEqual({ prioritized: 1 });
    } finally {
      client.disconnect();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
