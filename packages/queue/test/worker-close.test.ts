import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openWorker, QUEUE_NAMES } from '../src/index.js';

// Its own server: the tests stop and start it.
let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis?.stop());

/** Resolves with what `promise` settled to, or 'still waiting' after `ms` (far beyond any close that is not stuck). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([promise, sleep(ms, 'still waiting' as const)]);
}

/**
 * An idle Worker whose clients, once Redis is gone, wait a minute between
 * reconnect attempts: at the close below its blocking client is surely
 * between two attempts, as a client deep into BullMQ's default backoff (up to
 * 20 s) was when a close after a master restart never finished. Its other
 * client keeps the commands it could not send, as a worker's does
 * (`maxRetriesPerRequest: null`), and its stalled-job check, every 30 s
 * otherwise, queues one there while Redis is away.
 */
function idleWorker(): Worker<unknown, void> {
  return openWorker(QUEUE_NAMES.alerts, () => Promise.resolve(), {
    connection: { url: redis.url, maxRetriesPerRequest: null, retryStrategy: () => 60_000 },
    namespace: `test-${randomUUID()}`,
    stalledInterval: 300,
  });
}

/** Long enough for the clients to see the server go and queue a stalled-job check. */
const NOTICE_MS = 2_000;

describe('openWorker close while its blocking client waits to reconnect', () => {
  it.each([
    ['while Redis is away', false],
    ['once Redis is back, before its next attempt', true],
  ] as const)('closes %s', async (_when, backFirst) => {
    const worker = idleWorker();
    let back = false;
    try {
      await worker.waitUntilReady();
      await redis.halt();
      await sleep(NOTICE_MS);
      if (backFirst) {
        await redis.start();
        back = true;
      }
      expect(await within(worker.close().then(() => 'closed'), 15_000)).toBe('closed');
    } finally {
      if (!back) await redis.start();
      await within(worker.close(true), 5_000);
    }
  });
});

describe('openWorker close while a take of the next job waits for Redis', () => {
  it('closes, failing the take, when the take was sent as Redis went away', async () => {
    const worker = idleWorker();
    // Holds the worker's next take of a job until Redis is gone, so the
    // command waits in a client that keeps it for as long as Redis is away.
    const backend = (worker as unknown as { backend: { moveToActive(...args: unknown[]): Promise<unknown> } }).backend;
    const take = backend.moveToActive.bind(backend);
    let halted: Promise<void> | undefined;
    let heldTake: Promise<unknown> | undefined;
    backend.moveToActive = (...args: unknown[]) => {
      if (halted !== undefined) return take(...args);
      halted = redis.halt();
      heldTake = halted.then(() => take(...args));
      return heldTake;
    };
    try {
      // Not `worker.waitUntilReady()`: its own commands would wait for Redis
      // when the worker's first take, which halts it, comes before them.
      await vi.waitFor(() => expect(heldTake).toBeDefined(), { timeout: 30_000 });
      await halted;
      await sleep(NOTICE_MS);
      expect(await within(worker.close().then(() => 'closed'), 15_000)).toBe('closed');
      // The take failed: it did not wait for Redis to come back.
      await expect(heldTake).rejects.toThrow(/closing/);
    } finally {
      if (halted !== undefined) {
        await halted;
        await redis.start();
      }
      await within(worker.close(true), 5_000);
    }
  });

  it('closes when Redis went away before the worker ever connected (its take waits for the first connection)', async () => {
    await redis.halt();
    try {
      const worker = idleWorker();
      await sleep(NOTICE_MS);
      expect(await within(worker.close().then(() => 'closed'), 15_000)).toBe('closed');
    } finally {
      await redis.start();
    }
  });
});
