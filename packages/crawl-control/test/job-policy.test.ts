import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type CrawlqConfig } from '@crawlq/config';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobPolicyFrom, openCrawlServices, publishCrawlDefinition, retryJobPolicyFor } from '../src/index.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis.stop();
});

function config(namespace: string, flags: Record<string, unknown>): CrawlqConfig {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-job-policy-'));
  return loadConfig({ flags: { namespace, out: join(dir, 'out.jsonl'), stateDir: dir, ...flags } });
}

describe('jobPolicyFrom', () => {
  it('maps --attempts and --backoff to the BullMQ job policy', () => {
    expect(jobPolicyFrom(config('p', { attempts: 4, backoff: '3s' }))).toEqual({ attempts: 4, backoffMs: 3_000 });
  });
});

describe('retryJobPolicyFor', () => {
  it("takes the fleet's policy, except options the command was given", async () => {
    const namespace = `job-policy-${randomUUID()}`;
    const services = await openCrawlServices(config(namespace, { attempts: 7, backoff: '2s' }), redis.url, { role: 'producer' });
    try {
      await publishCrawlDefinition(services, 'test');
    } finally {
      await services.close();
    }
    expect(await retryJobPolicyFor(config(namespace, {}), redis.url)).toEqual({ attempts: 7, backoffMs: 2_000 });
    expect(await retryJobPolicyFor(config(namespace, { backoff: '5s' }), redis.url)).toEqual({ attempts: 7, backoffMs: 5_000 });
    expect(await retryJobPolicyFor(config(namespace, { attempts: 1 }), redis.url)).toEqual({ attempts: 1, backoffMs: 2_000 });
  });

  it('is the own policy when no fleet definition exists', async () => {
    expect(await retryJobPolicyFor(config(`job-policy-${randomUUID()}`, { attempts: 3 }), redis.url)).toMatchObject({ attempts: 3 });
  });
});
