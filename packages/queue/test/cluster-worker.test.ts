import { setTimeout as sleep } from 'node:timers/promises';
import { queuePrefix } from '@crawlq/redis';
import { startTestRedisCluster, waitFor, type TestRedisCluster } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openQueue, openWorker, QUEUE_NAMES } from '../src/index.js';

// BullMQ on a Redis Cluster, through openQueue/openWorker and a URL.
let cluster: TestRedisCluster;

beforeAll(async () => {
  cluster = await startTestRedisCluster();
}, 180_000);
afterAll(async () => cluster?.stop());

/** Resolves with what `promise` settled to, or 'still waiting' after `ms` (far beyond any close that is not stuck). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([promise, sleep(ms, 'still waiting' as const)]);
}

describe('openWorker on a cluster URL', () => {
  // The test's own bounds decide (jobs flow again within 120 s, each close within 60 s, a
  // restart within the helper's bound): the overall timeout sits above their sum, so a slow
  // machine fails on the step that was slow, with its message, not on a blanket timeout.
  it('runs jobs before and after the master of its queue was away, and both workers close', { timeout: 330_000 }, async () => {
    const namespace = 'cluster-worker';
    const done: string[] = [];
    const idle = openWorker(QUEUE_NAMES.alerts, () => Promise.resolve(), { connection: { url: cluster.url }, namespace });
    const busy = openWorker<{ n: number }>(QUEUE_NAMES.crawl, (job) => Promise.resolve(void done.push(String(job.data.n))), { connection: { url: cluster.url }, namespace, concurrency: 4 });
    const queue = openQueue<{ n: number }>(QUEUE_NAMES.crawl, { connection: { url: cluster.url }, namespace });
    try {
      await Promise.all([idle.waitUntilReady(), busy.waitUntilReady()]);
      await queue.add('crawl', { n: 1 });
      await waitFor(() => done.includes('1'), { what: 'the job to complete', timeoutMs: 120_000, intervalMs: 50 });

      const owner = await cluster.masterOf(queuePrefix(namespace));
      // Producers keep adding while the master is away, as a crawl's workers do.
      let n = 100;
      const adding = setInterval(() => void queue.add('crawl', { n: (n += 1) }).catch(() => undefined), 100);
      await cluster.halt(owner);
      // Longer than the cluster's node timeout (5 s): the other masters mark it failed and answer CLUSTERDOWN.
      await sleep(10_000);
      await cluster.start(owner);
      clearInterval(adding);
      // Closed at once, while its blocking client may still wait out its reconnect backoff (a close
      // then never ended; worker-close.test.ts shows that every time, this run only sometimes).
      const idleClosed = within(idle.close().then(() => 'closed'), 60_000);
      // Jobs flow again once it is back: the job is added as soon as the
      // cluster takes it (an add sent while the client still maps the
      // restarted master's slots can wait on it; a bounded try is sent again,
      // and a second copy of job 2 would change nothing here)...
      await waitFor(async () => (await within(queue.add('crawl', { n: 2 }).then(() => true, () => false), 15_000)) === true, { what: 'the cluster to take a job again', timeoutMs: 120_000, intervalMs: 500 });
      await waitFor(() => done.includes('2'), { what: 'the job to complete', timeoutMs: 120_000, intervalMs: 50 });
      // ...and both workers close.
      expect(await idleClosed).toBe('closed');
      expect(await within(busy.close().then(() => 'closed'), 60_000)).toBe('closed');
    } finally {
      // Bounded, so a close that hangs after a failed step leaves that step's message, not a blanket timeout.
      await within(Promise.all([idle.close(true), busy.close(true), queue.close()]).catch(() => undefined), 30_000);
    }
  });
});

