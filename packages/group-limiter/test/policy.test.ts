import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter, GroupLimiterArgumentError, InvalidLimitPolicyError, normalizePolicy, type LimitPolicyInput } from '../src/index.js';
import { countCommands, testPrefix } from './support.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => server.stop());

const oneAtATime: LimitPolicyInput = { defaults: { rate: null, concurrency: 1 } };
const threeAtATime: LimitPolicyInput = { defaults: { rate: null, concurrency: 3 } };

describe('fleet policy', () => {
  it('reports whether setPolicy changed anything and what it replaced', async () => {
    const prefix = testPrefix();
    const admin = createGroupLimiter({ redis: server.client(), prefix });
    expect(await admin.getPolicy()).toBeNull();
    expect(await admin.setPolicy(oneAtATime)).toEqual({ changed: true, previous: null });
    expect(await admin.setPolicy(oneAtATime)).toEqual({ changed: false, previous: normalizePolicy(oneAtATime) });
    expect(await admin.setPolicy(threeAtATime)).toEqual({ changed: true, previous: normalizePolicy(oneAtATime) });
    expect(await admin.getPolicy()).toEqual(normalizePolicy(threeAtATime));
  });

  it('makes every other limiter switch at its next call (stale version: reload + retry)', async () => {
    const prefix = testPrefix();
    const admin = createGroupLimiter({ redis: server.client(), prefix });
    const workerClient = server.client();
    const commands = countCommands(workerClient);
    const worker = createGroupLimiter({ redis: workerClient, prefix });
    await admin.setPolicy(oneAtATime);

    expect((await worker.acquire({ group: 'g.test', leaseId: 'a' })).admitted).toBe(true);
    expect(worker.limitsFor('g.test').concurrency).toBe(1);
    expect((await worker.acquire({ group: 'g.test', leaseId: 'b' })).admitted).toBe(false);

    await admin.setPolicy(threeAtATime);
    expect(worker.limitsFor('g.test').concurrency).toBe(1); // cached until Redis says otherwise
    commands.reset();
    expect((await worker.acquire({ group: 'g.test', leaseId: 'b' })).admitted).toBe(true);
    expect(commands.count).toBe(3); // EVALSHA answered 'stale', HMGET policy, EVALSHA again
    expect(worker.limitsFor('g.test').concurrency).toBe(3);
    commands.reset();
    expect((await worker.acquire({ group: 'g.test', leaseId: 'c' })).admitted).toBe(true);
    expect(commands.count).toBe(1);
    expect((await worker.acquire({ group: 'g.test', leaseId: 'd' })).admitted).toBe(false);
  });

  it('uses the local policy until one is stored, then the stored one', async () => {
    const prefix = testPrefix();
    const worker = createGroupLimiter({ redis: server.client(), prefix, policy: oneAtATime });
    expect(worker.limitsFor('x.test').concurrency).toBe(1);
    expect((await worker.acquire({ group: 'x.test', leaseId: randomUUID() })).admitted).toBe(true);
    expect((await worker.acquire({ group: 'x.test', leaseId: randomUUID() })).admitted).toBe(false);
    await createGroupLimiter({ redis: server.client(), prefix }).setPolicy(threeAtATime);
    expect((await worker.acquire({ group: 'x.test', leaseId: randomUUID() })).admitted).toBe(true);
    expect(worker.limitsFor('x.test').concurrency).toBe(3);
  });

  it('resolves rules first match wins, falling back to defaults', async () => {
    const limiter = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await limiter.setPolicy({
      defaults: { rate: { max: 2, durationMs: 1000 }, burst: 1, concurrency: 4 },
      rules: [
        { match: 'slow.example.com', rate: { max: 1, durationMs: 10_000 } },
        { match: '*.example.com', concurrency: 1 },
        { match: '*', burst: 2 },
      ],
    });
    expect(limiter.limitsFor('slow.example.com')).toEqual({ rate: { max: 1, durationMs: 10_000 }, burst: 1, concurrency: 4 });
    expect(limiter.limitsFor('www.example.com')).toEqual({ rate: { max: 2, durationMs: 1000 }, burst: 1, concurrency: 1 });
    expect(limiter.limitsFor('example.com')).toEqual({ rate: { max: 2, durationMs: 1000 }, burst: 2, concurrency: 4 });
  });

  it('rejects invalid policies and arguments with non-retryable errors', async () => {
    const limiter = createGroupLimiter({ redis: server.client(), prefix: testPrefix() });
    await expect(limiter.setPolicy({ defaults: { burst: 0 } })).rejects.toBeInstanceOf(InvalidLimitPolicyError);
    expect(() => createGroupLimiter({ redis: server.client(), prefix: '' })).toThrow(GroupLimiterArgumentError);
    await expect(limiter.acquire({ group: '', leaseId: 'x' })).rejects.toMatchObject({ name: 'GroupLimiterArgumentError', retryable: false });
    await expect(limiter.pause('g.test', -1)).rejects.toBeInstanceOf(GroupLimiterArgumentError);
  });

  it('wraps Redis failures in a retryable error', async () => {
    const client = server.client();
    const limiter = createGroupLimiter({ redis: client, prefix: testPrefix() });
    client.disconnect();
    await expect(limiter.acquire({ group: 'g.test', leaseId: 'x' })).rejects.toMatchObject({
      name: 'GroupLimiterRedisError',
      retryable: true,
      operation: 'acquire',
    });
  });
});
