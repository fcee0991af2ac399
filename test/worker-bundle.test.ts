import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { mimePart, readWarcWithAllReaders, startTestPostgres, startTestRedis, type TestPostgres, type TestRedis, waitFor } from '@crawlq/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, REPO_ROOT, runCli } from './support/cli.js';
import { duplicates } from './support/records.js';

// `crawl` spawns its workers from one bundled file, apps/cli/dist/crawlq-worker.js
//. What a worker loads only when a feature is used (pg, warcio,
// nodemailer) and the CommonJS packages inside the bundle must work there as
// they do unbundled. The bundle is made the way `pnpm build` makes it, into a
// temp dir, and run against loopback services.

const GOOD = '127.0.0.31';
const FAILING = '127.0.0.32';

let redis: TestRedis;
let database: TestPostgres;
let site: DemoSite;
let bundle: string;

beforeAll(async () => {
  [redis, database, site] = await Promise.all([
    startTestRedis(),
    startTestPostgres(),
    startDemoSite({ hosts: [GOOD, FAILING], pagesPerHost: 12, linksPerPage: 3 }),
  ]);
  site.setFaults([{ host: FAILING, status: 503 }]);
  const outdir = mkdtempSync(join(tmpdir(), 'crawlq-bundle-'));
  bundle = join(outdir, 'crawlq-worker.js');
  const built = spawnSync(process.execPath, [join(REPO_ROOT, 'apps/cli/bundle.mjs'), outdir], { encoding: 'utf8', timeout: 120_000 });
  if (built.status !== 0) throw new Error(`bundling failed: ${built.stderr}`);
}, 180_000);
afterAll(async () => {
  await Promise.allSettled([site?.close(), redis?.stop(), database?.stop()]);
});

describe('the bundled worker', () => {
  it('crawls into PostgreSQL with WARC archives, and writes the dead-letter alert to the outbox', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-bundle-run-'));
    const warcDir = join(dir, 'warc');
    const outbox = join(dir, 'outbox');
    const namespace = 'bundled';
    const env = cliEnv(redis.url);
    const enqueued = await runCli(
      ['enqueue', ...site.seeds, '--namespace', namespace, '--allow-private-network', '--rate', '20/1s', '--attempts', '1', '--fetch-retries', '0'],
      { env },
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);

    const worker = spawn(
      process.execPath,
      [bundle, 'worker', '--namespace', namespace, '--database-url', database.url, '--warc', warcDir, '--outbox-dir', outbox, '--alert-delay', '0', '--concurrency', '4'],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    worker.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    worker.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

    const admin = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const good = site.reachable({ seeds: site.seeds.filter((seed) => new URL(seed).hostname === GOOD), maxDepth: 5, scope: 'host' });
      const rows = async (): Promise<string[]> => {
        try {
          const { rows: found } = await admin.query<{ url: string }>('SELECT url FROM crawlq_results WHERE namespace = $1', [namespace]);
          return found.map((row) => row.url);
        } catch {
          return []; // The worker has not made the table yet.
        }
      };
      const emails = () => (existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : []);
      await waitFor(async () => {
        if (worker.exitCode !== null) throw new Error(`the worker exited (${worker.exitCode})`);
        return (await rows()).length >= good.size && emails().length > 0 ? true : undefined;
      }, {
        timeoutMs: 180_000,
        intervalMs: 100,
        what: `${good.size} rows and an alert in the outbox`,
      }).catch((error: Error) => {
        throw new Error(`${error.message}\n${output.slice(-3_000)}`);
      });
      worker.kill('SIGTERM');
      expect(await exited(worker), output).toBe(0);

      // pg: every page of the good host, once; the failing host's page is a dead letter, not a row.
      const urls = await rows();
      expect(duplicates(urls)).toEqual([]);
      expect(new Set(urls)).toEqual(good);
      // nodemailer: the alert names the page that failed.
      const email = readFileSync(join(outbox, emails()[0] ?? ''), 'utf8');
      expect(mimePart(email, 'text/plain')).toContain(FAILING);
      // warcio: closed WARC files that three independent readers accept, with a response record for every page.
      const files = readdirSync(warcDir).filter((name) => name.endsWith('.warc.gz'));
      expect(files.length).toBeGreaterThan(0);
      const read = await Promise.all(files.map((name) => readWarcWithAllReaders(readFileSync(join(warcDir, name)), name)));
      const responses = new Set(
        read
          .flat()
          .filter((record) => record.headers['warc-type'] === 'response')
          .map((record) => record.headers['warc-target-uri']),
      );
      for (const url of good) expect(responses.has(url), url).toBe(true);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
      await admin.end();
    }
  });
});
