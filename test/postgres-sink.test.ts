import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { type CheckedWarcRecord, checkWarcFile, readWarcWithAllReaders, startTestPostgres, startTestRedis, type TestPostgres, type TestRedis, waitFor } from '@crawlq/testing';
import pg from 'pg';
import { WARCParser } from 'warcio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { duplicates } from './support/records.js';

let redis: TestRedis;
let database: TestPostgres;
let site: DemoSite;
let admin: pg.Pool;

beforeAll(async () => {
  [redis, database, site] = await Promise.all([
    startTestRedis(),
    startTestPostgres(),
    startDemoSite({ hosts: ['127.0.0.21', '127.0.0.22', '127.0.0.23'], pagesPerHost: 80, linksPerPage: 4, crossHostLinksPerPage: 1, brokenLinksPerPage: 1 }),
  ]);
  admin = new pg.Pool({ connectionString: database.url, max: 1 });
  admin.on('error', () => undefined); // The server is restarted on purpose.
});
afterAll(async () => {
  await admin?.end();
  await Promise.allSettled([site?.close(), redis?.stop(), database?.stop()]);
});

async function rowCount(namespace: string): Promise<number> {
  try {
    const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM crawlq_results WHERE namespace = $1', [namespace]);
    return Number(rows[0]?.n ?? 0);
  } catch {
    return -1; // No table yet, or the server is restarting.
  }
}

interface Row {
  url: string;
  status: number | null;
  skipped: string | null;
  writes: number;
  record: { finalUrl?: string; status?: number; warc?: { file: string; offset: number; length: number } };
}

describe('the PostgreSQL sink with a fleet of worker processes', () => {
  it('3 workers write one table: every page exactly one row, through a kill -9 and a database restart; WARC archives match', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-pg-fleet-'));
    const warcDir = join(dir, 'warc');
    const namespace = 'pgfleet';
    const fleet = new Fleet({
      redisUrl: redis.url,
      dir,
      flags: ['--namespace', namespace, '--allow-private-network', '--rate', '10/1s', '--domain-concurrency', '2', '--scope', 'any', '--max-depth', '50', '--stall-timeout', '5s', '--sink-batch-size', '16',
        // A killed worker's concurrency slots come back after the lease time: keep it short.
        '--request-timeout', '10s', '--lease-time', '10s'],
    });
    const enqueued = await fleet.cli(['enqueue', ...site.seeds, '--allow-private-network', '--rate', '10/1s', '--domain-concurrency', '2', '--scope', 'any', '--max-depth', '50', '--request-timeout', '10s', '--lease-time', '10s']);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const sinkFlags = ['--database-url', database.url, '--warc', warcDir, '--warc-max-size', '64kb', '--concurrency', '4'];
    const victim = await fleet.start(sinkFlags);
    await fleet.start(sinkFlags);
    await fleet.start(sinkFlags);

    const diagnose = async () => `rows ${await rowCount(namespace)}; status ${JSON.stringify(await fleet.status())}\n${fleet.logs.join('\n').slice(-3_000)}`;
    await waitFor(async () => ((await rowCount(namespace)) >= 30 ? true : undefined), { timeoutMs: 180_000, intervalMs: 100, what: '30 rows' }).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${await diagnose()}`);
    });
    victim.kill('SIGKILL');
    await exited(victim);
    const atKill = await rowCount(namespace);
    await waitFor(async () => ((await rowCount(namespace)) >= atKill + 30 ? true : undefined), { timeoutMs: 180_000, intervalMs: 100, what: '30 more rows' }).catch(async (error: Error) => {
      throw new Error(`${error.message} (${atKill} at the kill): ${await diagnose()}`);
    });
    await database.crash();
    // Down until a write has met the outage (a fixed 2 s passed without one on
    // a slow machine): the sink holds its records and retries meanwhile.
    await waitFor(() => (fleet.logs.join('\n').includes('cannot write to PostgreSQL') ? true : undefined), { timeoutMs: 120_000, intervalMs: 100, what: 'a write refused by the stopped database' }).catch(async (error: Error) => {
      await database.start();
      throw new Error(`${error.message}: ${await diagnose()}`);
    });
    await database.start();

    await fleet.waitUntilDone(300_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${await diagnose()}`);
    });
    const codes = await fleet.stop();
    // The killed worker has no exit code; the two others stop cleanly.
    expect(codes.slice(1), fleet.logs.join('\n')).toEqual([0, 0]);
    const logs = fleet.logs.join('\n');
    expect(logs).toContain('cannot write to PostgreSQL');
    expect(logs).not.toContain(database.password);

    const { rows } = await admin.query<Row>('SELECT url, status, skipped, writes, record FROM crawlq_results WHERE namespace = $1', [namespace]);
    const urls = rows.map((row) => row.url);
    expect(duplicates(urls)).toEqual([]);
    const expected = site.reachable({ seeds: site.seeds, maxDepth: 50, scope: 'any' });
    expect(new Set(urls)).toEqual(expected);
    // Every page the site served has its row (a fetch whose job was re-run after the kill may repeat; the row does not).
    const served = new Set(site.requests.filter((request) => request.path !== '/robots.txt').map((request) => request.url));
    for (const url of served) expect(expected.has(url), url).toBe(true);

    // WARC: every row points at a response record of its page; closed files read alike by three independent readers.
    const files = readdirSync(warcDir);
    expect(files.some((name) => name.endsWith('.warc.gz'))).toBe(true);
    const byFile = new Map<string, Buffer>();
    const read = (name: string): Buffer => {
      let bytes = byFile.get(name);
      if (!bytes) {
        bytes = readFileSync(existsSync(join(warcDir, name)) ? join(warcDir, name) : join(warcDir, `${name}.open`));
        byFile.set(name, bytes);
      }
      return bytes;
    };
    const checked = new Map<string, CheckedWarcRecord[]>();
    for (const name of files.filter((file) => file.endsWith('.warc.gz'))) checked.set(name, await readWarcWithAllReaders(read(name), name));
    let responses = 0;
    let requests = 0;
    for (const name of checked.keys()) {
      for await (const record of new WARCParser(new Blob([new Uint8Array(read(name))]).stream())) {
        if (record.warcType === 'response') responses += 1;
        if (record.warcType === 'request') requests += 1;
      }
    }
    expect(requests).toBe(responses);
    const pages = rows.filter((row) => row.skipped === null);
    for (const row of pages) {
      const where = row.record.warc;
      expect(where, row.url).toBeDefined();
      if (!where) continue;
      // Closed files were checked above; a killed worker's `.open` file is read up to the record.
      const bytes = read(where.file);
      const member = checkWarcFile(bytes.subarray(where.offset, where.offset + where.length));
      expect(member.map((record) => record.headers['warc-type'])).toEqual(['response', 'request']);
      expect(member[0]?.headers['warc-target-uri']).toBe(row.record.finalUrl);
      const head = member[0]!.block.toString('latin1').split('\r\n')[0];
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${row.status} `));
    }
    // A re-run job archives its page again, so closed files may hold more responses than rows point at.
    const inClosedFiles = pages.filter((row) => row.record.warc && checked.has(row.record.warc.file));
    expect(inClosedFiles.length).toBeGreaterThan(0);
    expect(responses).toBeGreaterThanOrEqual(inClosedFiles.length);

    // Reading back through the CLI.
    const env = cliEnv(redis.url, { CRAWLQ_DATABASE_URL: database.url });
    const stats = await runCli(['results', 'stats', '--json', '--namespace', namespace], { env });
    expect(stats.code, stats.stderr).toBe(0);
    const parsed = JSON.parse(stats.stdout) as { rows: number; pages: number };
    expect(parsed.rows).toBe(expected.size);
    expect(parsed.pages).toBe(pages.length);
    const csvFile = join(dir, 'export.csv');
    const exported = await runCli(['results', 'export', '--format', 'csv', '--out', csvFile, '--namespace', namespace], { env });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain(`exported ${expected.size} record(s)`);
    expect(exported.stderr).not.toContain(database.password);
    const lines = readFileSync(csvFile, 'utf8').trimEnd().split('\r\n');
    expect(lines[0]).toMatch(/^url,finalUrl,status,/);
    expect(lines).toHaveLength(expected.size + 1);
    const jsonl = await runCli(['results', 'export', '--namespace', namespace], { env });
    const records = jsonl.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { url: string });
    expect(new Set(records.map((record) => record.url))).toEqual(expected);
  }, 900_000);
});

describe('database errors', () => {
  it('a malformed database URL exits 2 without echoing the password', async () => {
    const result = await runCli(['worker', '--database-url', 'postgres://crawlq:hunter2secret@bad host:5432/db'], { env: cliEnv(redis.url) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--database-url');
    expect(result.stderr).not.toContain('hunter2secret');
  }, 180_000);

  it('a wrong password exits 2 without echoing it', async () => {
    const url = database.url.replace(database.password, 'not-the-password-xyz');
    const result = await runCli(['worker', '--namespace', 'badpw', '--out', url], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('postgres://crawlq:***@127.0.0.1');
    expect(result.stderr).not.toContain('not-the-password-xyz');
  }, 180_000);

  it('an unreachable database is waited for with a message; the worker starts once it answers', async () => {
    // The file's server, stopped (as the fleet case does): no second server to create for this.
    const late = database;
    await late.crash();
    let restarted = false;
    const child = startCli(['worker', '--namespace', 'late', '--database-url', late.url], { env: cliEnv(redis.url) });
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    try {
      await waitFor(() => (log.includes('waiting for PostgreSQL') ? true : undefined), { timeoutMs: 60_000, what: 'the waiting message' });
      expect(log).not.toContain('started (');
      await late.start();
      restarted = true;
      await waitFor(() => (log.includes('started (') ? true : undefined), { timeoutMs: 60_000, what: 'the worker to start' });
      expect(log).toContain('PostgreSQL ');
      expect(log).not.toContain(late.password);
      child.kill('SIGTERM');
      expect(await exited(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      // Running again for what follows, whatever happened above.
      if (!restarted) await late.start().catch(() => undefined);
    }
  }, 180_000);
});

describe('--store-body', () => {
  it('keeps the decoded HTML in the JSONL record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-body-'));
    const out = join(dir, 'out.jsonl');
    const result = await runCli(['crawl', site.seeds[0]!, '--namespace', 'body', '--allow-private-network', '--rate', 'none', '--max-pages', '5', '--store-body', '--out', out, '--state-dir', join(dir, 'state')], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);
    const records = readFileSync(out, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { status: number; body?: string; title: string | null });
    expect(records.length).toBeGreaterThan(0);
    for (const record of records.filter((one) => one.status === 200)) {
      expect(record.body).toContain('<html');
      expect(record.body).toContain(`<title>${record.title}</title>`);
    }
  }, 180_000);
});

