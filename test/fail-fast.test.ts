import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startTestPostgres, startTestRedis, type TestPostgres, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, type CliResult } from './support/cli.js';

// `crawl`, `worker` and `enqueue` prove every sink and path they were given
// before they publish a crawl definition or enqueue a seed: a typo is one
// line naming the option, with exit code 2, and Redis is left as it was.
// Before, the definition was published and the seeds enqueued, then the
// workers died one by one and `crawl` exited 1 ("every worker process died").
let redis: TestRedis;
let database: TestPostgres;
const dir = mkdtempSync(join(tmpdir(), 'crawlq-fail-fast-'));
/** A regular file: nothing can be created under it (ENOTDIR). */
const aFile = join(dir, 'a-file');
writeFileSync(aFile, 'not a directory\n');
// Nothing listens there; nothing is fetched anyway when the crawl refuses to start.
const SEED = 'http://127.0.0.1:9/';

beforeAll(async () => {
  [redis, database] = await Promise.all([startTestRedis(), startTestPostgres()]);
});
afterAll(async () => {
  await Promise.allSettled([redis?.stop(), database?.stop()]);
});

/** Every key of the namespace: its crawl definition, seen-set, queue, counters. */
async function keysOf(namespace: string): Promise<string[]> {
  return redis.client().keys(`*{${namespace}}*`);
}

function crawl(namespace: string, ...args: string[]): Promise<CliResult> {
  return runCli(['crawl', SEED, '--namespace', namespace, '--allow-private-network', '--state-dir', join(dir, namespace), ...args], {
    env: cliEnv(redis.url),
    timeoutMs: 180_000,
  });
}

/** stderr's lines that begin `crawlq:` (the one line an error prints; log lines have their own format). */
function errorLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => line.startsWith('crawlq:'));
}

describe('a sink or path that cannot be used stops the command before anything is published', () => {
  it('crawl with a wrong database password: exit 2, one line naming --database-url without the password; no definition, no seeds', async () => {
    const url = database.url.replace(database.password, 'wrong-password-31337');
    const result = await crawl('ff-badpw', '--database-url', url);
    expect(result.code, result.stderr).toBe(2);
    expect(errorLines(result), result.stderr).toEqual([
      `crawlq: --database-url: PostgreSQL at postgres://crawlq:***@127.0.0.1:${database.port}/postgres refused the connection: password authentication failed for user "crawlq"`,
    ]);
    expect(result.stderr).not.toContain('wrong-password-31337');
    expect(result.stderr).not.toContain('every worker process died');
    expect(await keysOf('ff-badpw')).toEqual([]);
  }, 240_000);

  it('crawl with a --warc directory that cannot be created: exit 2, one line naming --warc; no definition, no seeds', async () => {
    const warc = join(aFile, 'warc');
    const result = await crawl('ff-warc', '--out', join(dir, 'ff-warc.jsonl'), '--warc', warc);
    expect(result.code, result.stderr).toBe(2);
    expect(errorLines(result), result.stderr).toEqual([`crawlq: --warc: cannot create directory ${warc} (ENOTDIR: not a directory)`]);
    expect(await keysOf('ff-warc')).toEqual([]);
  }, 240_000);

  it('crawl with an --out file that cannot be written: exit 2, one line naming --out; no definition, no seeds', async () => {
    const result = await crawl('ff-out', '--out', dir);
    expect(result.code, result.stderr).toBe(2);
    expect(errorLines(result), result.stderr).toEqual([`crawlq: --out: cannot write ${dir} (EISDIR: illegal operation on a directory)`]);
    expect(await keysOf('ff-out')).toEqual([]);
    const nested = join(aFile, 'results.jsonl');
    const second = await crawl('ff-out', '--out', nested);
    expect(second.code, second.stderr).toBe(2);
    expect(errorLines(second), second.stderr).toEqual([`crawlq: --out: cannot create directory ${aFile} (EEXIST: file already exists)`]);
    expect(await keysOf('ff-out')).toEqual([]);
  }, 240_000);

  it('crawl with an unreachable database: exit 1 (a service failed), one line naming --database-url; no definition, no seeds', async () => {
    const port = await freePort(); // Nothing listens on it.
    const url = `postgres://crawlq:unreachable-secret-42@127.0.0.1:${port}/postgres`;
    const result = await crawl('ff-down', '--database-url', url);
    expect(result.code, result.stderr).toBe(1);
    expect(errorLines(result), result.stderr).toEqual([
      `crawlq: --database-url: PostgreSQL at postgres://crawlq:***@127.0.0.1:${port}/postgres is unavailable (connect ECONNREFUSED 127.0.0.1:${port})`,
    ]);
    expect(result.stderr).not.toContain('unreachable-secret-42');
    expect(await keysOf('ff-down')).toEqual([]);
  }, 240_000);

  it('a worker joining an empty namespace with a wrong password or an unusable --warc publishes no definition', async () => {
    const url = database.url.replace(database.password, 'wrong-password-31337');
    const badPassword = await runCli(['worker', '--namespace', 'ff-worker', '--database-url', url], { env: cliEnv(redis.url) });
    expect(badPassword.code, badPassword.stderr).toBe(2);
    expect(errorLines(badPassword), badPassword.stderr).toEqual([
      `crawlq: --database-url: PostgreSQL at postgres://crawlq:***@127.0.0.1:${database.port}/postgres refused the connection: password authentication failed for user "crawlq"`,
    ]);
    expect(await keysOf('ff-worker')).toEqual([]);

    const warc = join(aFile, 'warc');
    const badWarc = await runCli(['worker', '--namespace', 'ff-worker', '--out', join(dir, 'ff-worker.jsonl'), '--warc', warc], { env: cliEnv(redis.url) });
    expect(badWarc.code, badWarc.stderr).toBe(2);
    expect(errorLines(badWarc), badWarc.stderr).toEqual([`crawlq: --warc: cannot create directory ${warc} (ENOTDIR: not a directory)`]);
    expect(await keysOf('ff-worker')).toEqual([]);
  }, 240_000);

  it('crawl with a --state-dir that cannot be created: exit 2, one line naming --state-dir, with or without REDIS_URL; no definition, no seeds', async () => {
    const stateDir = join(aFile, 'state');
    const args = ['crawl', SEED, '--namespace', 'ff-state', '--allow-private-network', '--out', join(dir, 'ff-state.jsonl'), '--state-dir', stateDir];
    const shared = await runCli(args, { env: cliEnv(redis.url), timeoutMs: 180_000 });
    expect(shared.code, shared.stderr).toBe(2);
    expect(errorLines(shared), shared.stderr).toEqual([`crawlq: --state-dir: cannot create directory ${join(stateDir, 'run')} (ENOTDIR: not a directory)`]);
    expect(await keysOf('ff-state')).toEqual([]);
    // Without REDIS_URL the private redis-server would live there.
    const own = await runCli(args, { env: cliEnv(undefined), timeoutMs: 180_000 });
    expect(own.code, own.stderr).toBe(2);
    expect(errorLines(own), own.stderr).toEqual([`crawlq: --state-dir: cannot create directory ${stateDir} (ENOTDIR: not a directory)`]);
  }, 240_000);

  it('enqueue --file with a file that cannot be read: exit 2, one line naming --file; no definition, no seeds', async () => {
    const missing = join(dir, 'no-such-seeds.txt');
    const result = await runCli(['enqueue', SEED, '--namespace', 'ff-enqueue', '--file', missing], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(2);
    expect(errorLines(result), result.stderr).toEqual([`crawlq: --file: cannot read ${missing} (ENOENT: no such file or directory)`]);
    expect(await keysOf('ff-enqueue')).toEqual([]);
  }, 120_000);
});

// The helpers above must see keys when a command does publish: otherwise "no keys" proves nothing.
describe('the same commands with usable paths', () => {
  it('enqueue with a readable --file publishes the definition and the seed', async () => {
    const seeds = join(dir, 'seeds.txt');
    writeFileSync(seeds, `${SEED}\n`);
    const result = await runCli(['enqueue', '--namespace', 'ff-ok', '--allow-private-network', '--file', seeds], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('accepted 1');
    const keys = await keysOf('ff-ok');
    expect(keys).toContain('{ff-ok}:cq:definition');
    expect(keys.length).toBeGreaterThan(1);
  }, 120_000);
});
