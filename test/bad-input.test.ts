import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, type CliResult } from './support/cli.js';

// bad values that passed validation. Each is now refused before
// anything runs: exit 2, one line on stderr naming what is wrong, nothing
// written to Redis, no worker started.
const PASSWORD = 'B4dInputPw';
let redis: TestRedis;
let admin: Redis;
let redisUrl: string;
let server: Server;
let seed: string;

beforeAll(async () => {
  redis = await startTestRedis();
  admin = redis.client();
  // A password on the server: the refusals below must not echo it.
  await admin.config('SET', 'requirepass', PASSWORD);
  redisUrl = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
  server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html><title>ok</title></html>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  seed = `http://127.0.0.2:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

/** Called inside a test: `seed` exists once beforeAll has run. */
function crawlArgs(namespace: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bad-input-'));
  return ['crawl', seed, '--out', join(dir, 'results.jsonl'), '--state-dir', dir, '--namespace', namespace, '--allow-private-network', '--rate', 'none'];
}

function workerArgs(namespace: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bad-input-'));
  return ['worker', '--out', join(dir, 'results.jsonl'), '--state-dir', dir, '--namespace', namespace];
}

/** Refused as an input error: exit 2, exactly one line on stderr, nothing on stdout. */
function expectRefused(result: CliResult, line: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n').filter((text) => text !== '')).toHaveLength(1);
  expect(result.stderr).toMatch(line);
  expect(result.stderr).not.toContain(PASSWORD);
}

/** Keys in all databases of the test server: a refused command adds none. */
async function keyCount(): Promise<number> {
  const info = await admin.info('keyspace');
  return [...info.matchAll(/keys=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('durations that make no sense at 0', () => {
  it.each([
    { command: 'crawl', args: () => [...crawlArgs('zero-crawl'), '--request-timeout', '0'], option: '--request-timeout', env: {} },
    { command: 'worker', args: () => [...workerArgs('zero-worker'), '--request-timeout', '0'], option: '--request-timeout', env: {} },
    { command: 'crawl', args: () => crawlArgs('zero-lookup'), option: 'CRAWLQ_LOOKUP_TIMEOUT', env: { CRAWLQ_LOOKUP_TIMEOUT: '0' } },
    { command: 'worker', args: () => [...workerArgs('negative-connect'), '--connect-timeout', '-5s'], option: '--connect-timeout', env: {} },
  ])('$command with $option at 0 or below exits 2 in one line and starts no worker', async ({ args, option, env }) => {
    const keys = await keyCount();
    const result = await runCli(args(), { env: cliEnv(redisUrl, env), timeoutMs: 90_000 });
    expectRefused(result, new RegExp(`^crawlq: ${option}: expected a duration greater than 0`));
    expect(await keyCount()).toBe(keys); // nothing enqueued, no definition published, no worker registered
  }, 120_000);
});

describe('a lease shorter than a request', () => {
  it.each([
    { given: 'crawl --lease-time 1s', args: () => [...crawlArgs('short-lease'), '--lease-time', '1s'], env: {}, line: /^crawlq: --lease-time: 1s is shorter than --request-timeout 30s/ },
    { given: 'worker CRAWLQ_REQUEST_TIMEOUT=2m', args: () => workerArgs('long-request'), env: { CRAWLQ_REQUEST_TIMEOUT: '2m' }, line: /^crawlq: --lease-time: 1m is shorter than --request-timeout 2m/ },
  ])('$given exits 2 in one line naming --lease-time and starts nothing', async ({ args, env, line }) => {
    const keys = await keyCount();
    const result = await runCli(args(), { env: cliEnv(redisUrl, env), timeoutMs: 90_000 });
    expectRefused(result, line);
    expect(await keyCount()).toBe(keys);
  }, 120_000);
});

describe('an option missing its value', () => {
  it('refuses `--user-agent --max-depth 1` instead of taking --max-depth as the user agent', async () => {
    const keys = await keyCount();
    const result = await runCli([...crawlArgs('missing-value'), '--user-agent', '--max-depth', '1'], { env: cliEnv(redisUrl), timeoutMs: 90_000 });
    expectRefused(result, /^crawlq: --user-agent: missing its value \(the next word, --max-depth, is a flag\)$/m);
    expect(await keyCount()).toBe(keys);
  }, 120_000);

  it('refuses an option that ends the command line, in one line', async () => {
    const result = await runCli(['status', '--namespace'], { env: cliEnv(redisUrl), timeoutMs: 90_000 });
    expectRefused(result, /^crawlq: --namespace: missing its value \(nothing follows it\)$/m);
  }, 120_000);

  it('a negative number is a value, refused by its own check; --flag=VALUE passes a value that looks like a flag', async () => {
    const negative = await runCli([...crawlArgs('negative-depth'), '--max-depth', '-1'], { env: cliEnv(redisUrl), timeoutMs: 90_000 });
    expectRefused(negative, /^crawlq: --max-depth: /);
    expect(negative.stderr).not.toContain('missing its value');

    const set = await runCli(['config', 'set', '--namespace', 'dash-value', '--user-agent=--odd-bot/1'], { env: cliEnv(redisUrl), timeoutMs: 90_000 });
    expect(set.code, set.stderr).toBe(0);
    const shown = await runCli(['config', 'show', '--namespace', 'dash-value', '--json'], { env: cliEnv(redisUrl), timeoutMs: 90_000 });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('"userAgent":"--odd-bot/1"');
  }, 240_000);
});

describe('a Redis URL naming a database the server lacks', () => {
  it.each([
    { command: 'status --json', args: () => ['status', '--json', '--namespace', 'no-db'] },
    { command: 'crawl', args: () => crawlArgs('no-db') },
    { command: 'worker', args: () => workerArgs('no-db') },
  ])('$command exits 2 with one line naming the database and the redacted server', async ({ args }) => {
    const databases = Number(((await admin.config('GET', 'databases')) as string[])[1]);
    expect(databases).toBeGreaterThan(0);
    const missing = databases + 83;
    const keys = await keyCount();
    const result = await runCli(args(), { env: cliEnv(`${redisUrl}/${missing}`), timeoutMs: 90_000 });
    expectRefused(result, new RegExp(`^crawlq: Redis at redis://127\\.0\\.0\\.1:${redis.port} has no database ${missing} \\(it has ${databases}; databases setting\\)$`, 'm'));
    // Before this check the crawl ran in database 0 instead, and status read it as done.
    expect(await keyCount()).toBe(keys);
  }, 120_000);
});
