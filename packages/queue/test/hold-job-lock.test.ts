import { randomUUID } from 'node:crypto';
import { queuePrefix } from '@crawlq/redis';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRAWL_JOB_NAME, holdJobLock, openCrawlQueue, type CrawlJobData } from '../src/index.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

/** A job taken by a manual BullMQ worker with `token`: active, locked, as the crawl worker holds it while it fetches. */
async function activeJob(token: string) {
  const namespace = `test-${randomUUID()}`;
  const queue = openCrawlQueue({ url: redis.url }, namespace);
  const worker = new Worker<CrawlJobData>(queue.name, null, { connection: { url: redis.url }, prefix: queuePrefix(namespace) });
  await queue.add(CRAWL_JOB_NAME, { url: 'http://a.test/', depth: 0, group: 'a.test' }, { jobId: 'u1' });
  const job = await worker.getNextJob(token);
  if (job === undefined) throw new Error('no job taken');
  const keys = { lock: `${job.queueQualifiedName}:u1:lock`, active: `${job.queueQualifiedName}:active`, stalled: `${job.queueQualifiedName}:stalled` };
  return { job, keys, close: () => Promise.all([worker.close(), queue.close()]) };
}

describe('holdJobLock: a record is written only by the worker that holds its job', () => {
  it('held: true, and the lock runs a whole lock period again', async () => {
    const { job, keys, close } = await activeJob('token-a');
    const client = redis.client();
    try {
      await client.pexpire(keys.lock, 1_000);
      expect(await holdJobLock(client, job, { token: 'token-a', lockDurationMs: 30_000 })).toBe(true);
      expect(await client.pttl(keys.lock)).toBeGreaterThan(20_000);
    } finally {
      await close();
    }
  });

  it('lock run out while the job is still active (Redis was away): taken again, and no longer a stalled candidate', async () => {
    const { job, keys, close } = await activeJob('token-a');
    const client = redis.client();
    try {
      await client.del(keys.lock);
      await client.sadd(keys.stalled, 'u1');
      expect(await holdJobLock(client, job, { token: 'token-a', lockDurationMs: 30_000 })).toBe(true);
      expect(await client.get(keys.lock)).toBe('token-a');
      expect(await client.sismember(keys.stalled, 'u1')).toBe(0);
    } finally {
      await close();
    }
  });

  it("another worker's now, or back in the queue: false, and nothing changed", async () => {
    const { job, keys, close } = await activeJob('token-a');
    const client = redis.client();
    try {
      await client.set(keys.lock, 'token-b', 'PX', 30_000);
      expect(await holdJobLock(client, job, { token: 'token-a', lockDurationMs: 30_000 })).toBe(false);
      expect(await client.get(keys.lock)).toBe('token-b');
      // A stalled check handed it back: not active, no lock.
      await client.del(keys.lock);
      await client.lrem(keys.active, 0, 'u1');
      expect(await holdJobLock(client, job, { token: 'token-a', lockDurationMs: 30_000 })).toBe(false);
      expect(await client.exists(keys.lock)).toBe(0);
    } finally {
      await close();
    }
  });
});
