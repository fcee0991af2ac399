import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { readRecords } from './support/records.js';

let redis: TestRedis;
let site: DemoSite;
beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: ['127.0.0.1'], pagesPerHost: 3, linksPerPage: 1 });
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

describe('SSRF guard in a real crawl', () => {
  it('refuses loopback targets, by address and by a name resolving to it, unless allowed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-ssrf-'));
    const out = join(dir, 'out.jsonl');
    const seeds = [`http://127.0.0.1:${site.port}/`, `http://localhost:${site.port}/p/1`];
    const refused = await runCli(['crawl', ...seeds, '--out', out, '--namespace', 'ssrf-1', '--max-depth', '0', '--state-dir', dir], { env: cliEnv(redis.url) });
    expect(refused.code, refused.stderr).toBe(0);
    // The review hint acts on this crawl's namespace.
    expect(refused.stdout).toContain('(review: pnpm crawlq dlq list --namespace ssrf-1)');
    expect(site.requests).toHaveLength(0);
    expect(readRecords(out)).toHaveLength(0);
    const status = JSON.parse((await runCli(['status', '--json', '--namespace', 'ssrf-1'], { env: cliEnv(redis.url) })).stdout) as { deadLettered: number };
    expect(status.deadLettered).toBe(2);
    const dlq = await runCli(['dlq', 'list', '--json', '--namespace', 'ssrf-1'], { env: cliEnv(redis.url) });
    const entries = JSON.parse(dlq.stdout) as { reason: string; attempts: number; message: string }[];
    expect(entries.map((entry) => entry.reason)).toEqual(['ssrf', 'ssrf']);
    // Each refusal names the flag that lifts it.
    for (const entry of entries) expect(entry.message).toContain('--allow-private-network');
    // Permanent: one attempt, not three.
    expect(entries.map((entry) => entry.attempts)).toEqual([1, 1]);

    const allowed = await runCli(['crawl', ...seeds, '--out', out, '--namespace', 'ssrf-2', '--max-depth', '0', '--allow-private-network', '--json'], { env: cliEnv(redis.url) });
    expect(allowed.code, allowed.stderr).toBe(0);
    // --json: the summary as one object.
    expect(JSON.parse(allowed.stdout)).toMatchObject({ finished: true, interrupted: false, pages: 2, deadLettered: 0, seeds: { accepted: 2, rejected: [] } });
    expect(readRecords(out).map((record) => record.status)).toEqual([200, 200]);
  }, 240_000); // Two whole crawls and two CLI calls: a minute each on a loaded machine.
});
