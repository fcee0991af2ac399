import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

describe('crawlq dashboard', () => {
  it('serves the dead-letter view on loopback and stops on SIGINT', async () => {
    const child = startCli(['dashboard', '--port', '0', '--namespace', 'dash'], { env: cliEnv(redis.url) });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = await waitFor(() => /dashboard: (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1], { timeoutMs: 30_000, what: 'the dashboard URL' });
    const page = await fetch(`${url}/dead-letters`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('dead');
    // The landing page is the crawl overview, read through the fleet's status and group code.
    const overview = await fetch(`${url}/`);
    expect(new URL(overview.url).pathname).toBe('/overview');
    expect(await overview.text()).toContain('Politeness groups');
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
  });

  it('refuses a non-loopback address without credentials (exit 2)', async () => {
    const result = await runCli(['dashboard', '--host', '0.0.0.0', '--port', '0', '--namespace', 'dash'], { env: cliEnv(redis.url) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/auth|credential/i);
  });
});
