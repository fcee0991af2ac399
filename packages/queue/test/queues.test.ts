import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRAWL_JOB_NAME, CRAWL_JOB_RETENTION, QUEUE_NAMES, crawlJobOptions, crawlQueueKey, openCrawlQueue, openQueue, openWorker, type CrawlJobData, type QueueName } from '../src/index.js';
import { queuePrefix } from '@crawlq/redis';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

describe('crawl queue wiring', () => {
  it('gives jobs attempts and exponential backoff; the worker removes completed jobs and keeps every failed one', () => {
    expect(crawlJobOptions({ attempts: 4, backoffMs: 250 })).toEqual({ attempts: 4, backoff: { type: 'exponential', delay: 250, jitter: 0.5 } });
    expect(CRAWL_JOB_RETENTION).toEqual({ removeOnComplete: { count: 0 } });
  });

  it('names the crawl queue keys as BullMQ does, for readers that count without a Queue', () => {
    const namespace = `test-${randomUUID()}`;
    const queue = openCrawlQueue({ url: redis.url }, namespace);
    const keys = queue.keys as Record<string, string>;
    for (const state of ['wait', 'paused', 'prioritized', 'delayed', 'active', 'completed', 'failed']) {
      expect(crawlQueueKey(namespace, state)).toBe(keys[state]);
    }
    expect(crawlQueueKey(namespace, 'waiting-children')).toBe(queue.toKey('waiting-children'));
    return queue.close();
  });

  it('a completed crawl job leaves nothing in Redis; a failed one stays for the dead-letter queue', async () => {
    const namespace = `test-${randomUUID()}`;
    const queue = openCrawlQueue({ url: redis.url }, namespace);
    const worker = new Worker<CrawlJobData>(queue.name, (job) => (job.data.url.endsWith('/fail') ? Promise.reject(new Error('boom')) : Promise.resolve('ok')), {
      connection: { url: redis.url },
      prefix: queuePrefix(namespace),
      ...CRAWL_JOB_RETENTION,
    });
    try {
      const options = crawlJobOptions({ attempts: 1, backoffMs: 1 });
      const ended = new Promise((resolve) => {
        let count = 0;
        const end = () => (count += 1) === 2 && resolve(undefined);
        worker.on('completed', end);
        worker.on('failed', end);
      });
      await queue.add(CRAWL_JOB_NAME, { url: 'http://a.test/ok', depth: 1, group: 'a.test' }, { ...options, jobId: 'ok-fingerprint' });
      await queue.add(CRAWL_JOB_NAME, { url: 'http://a.test/fail', depth: 1, group: 'a.test' }, { ...options, jobId: 'fail-fingerprint' });
      await ended;
      expect(await queue.getJobCounts('waiting', 'prioritized', 'active', 'completed', 'failed')).toEqual({ waiting: 0, prioritized: 0, active: 0, completed: 0, failed: 1 });
      expect(await redis.client().exists(queue.toKey('ok-fingerprint'))).toBe(0);
      expect(await redis.client().exists(queue.toKey('fail-fingerprint'))).toBe(1);
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});

describe('openQueue', () => {
  it("opens each of the namespace's queues under its key prefix", async () => {
    const namespace = `test-${randomUUID()}`;
    const client = redis.client();
    for (const name of Object.values(QUEUE_NAMES)) {
      const queue = openQueue(name, { connection: { url: redis.url }, namespace });
      try {
        const job = await queue.add('probe', {}, { jobId: 'probe-1' });
        expect(job.id).toBe('probe-1');
        expect(await client.exists(`${queuePrefix(namespace)}:${name}:probe-1`)).toBe(1);
      } finally {
        await queue.close();
      }
    }
  });

  it("has an error listener: errors are dropped by default (no uncaught 'error'), handed to onError when given", async () => {
    const namespace = `test-${randomUUID()}`;
    await expectErrorPolicy((name, onError) => openQueue(name, { connection: { url: redis.url }, namespace, ...(onError ? { onError } : {}) }));
  });
});

describe('openWorker', () => {
  it("takes the jobs of the namespace's queue (same key prefix), with its own settings", async () => {
    const namespace = `test-${randomUUID()}`;
    const queue = openQueue<{ n: number }, number>(QUEUE_NAMES.alerts, { connection: { url: redis.url }, namespace });
    const worker = openWorker<{ n: number }, number>(QUEUE_NAMES.alerts, (job) => Promise.resolve(job.data.n * 2), {
      connection: { url: redis.url },
      namespace,
      concurrency: 3,
    });
    try {
      expect(worker.opts.concurrency).toBe(3);
      const done = new Promise<number>((resolve) => worker.once('completed', (_job, result) => resolve(result)));
      await queue.add('probe', { n: 21 });
      expect(await done).toBe(42);
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it("has openQueue's error listener: errors are dropped by default, handed to onError when given", async () => {
    const namespace = `test-${randomUUID()}`;
    await expectErrorPolicy((name, onError) =>
      openWorker(name, () => Promise.resolve(), { connection: { url: redis.url }, namespace, autorun: false, ...(onError ? { onError } : {}) }),
    );
  });
});

/** openQueue's and openWorker's error policy, on two of what `open` opens: one without onError, one with. */
async function expectErrorPolicy(
  open: (name: QueueName, onError?: (error: Error) => void) => { emit(event: 'error', error: Error): boolean; close(): Promise<void> },
): Promise<void> {
  const errors: Error[] = [];
  const quiet = open(QUEUE_NAMES.alerts);
  const heard = open(QUEUE_NAMES.deadLetter, (error) => errors.push(error));
  try {
    // An 'error' event nobody listens to would throw here.
    expect(() => quiet.emit('error', new Error('lost Redis'))).not.toThrow();
    heard.emit('error', new Error('lost Redis'));
    expect(errors.map((error) => error.message)).toEqual(['lost Redis']);
  } finally {
    await Promise.all([quiet.close(), heard.close()]);
  }
}
