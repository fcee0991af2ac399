import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@crawlq/testing';
import { cliEnv, startCli } from '../support/cli.js';
import { descendantsOf, processTable } from '../support/processes.js';
import { readRecords } from '../support/records.js';

// kill -9 of `crawl` leaves no worker, no private redis-server
// and no worker-config file behind. The crawl uses the embedded Redis (no
// REDIS_URL) under its own state dir.
let site: DemoSite;

beforeAll(async () => {
  site = await startDemoSite({ hosts: ['127.0.0.2'], pagesPerHost: 200, linksPerPage: 5 });
});
afterAll(async () => {
  await site.close();
});

const alive = (pid: number) => processTable().some((row) => row.pid === pid);

describe('kill -9 of the crawl coordinator', () => {
  it('its workers, its embedded redis-server and its config file are all gone soon after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-coordinator-kill-'));
    const out = join(dir, 'results.jsonl');
    // A slow crawl (2 pages a second) that is still running when it is killed.
    const child = startCli(
      ['crawl', site.seeds[0] ?? '', '--out', out, '--namespace', 'kill9', '--allow-private-network', '--rate', '2/1s', '--workers', '2', '--grace-period', '2s', '--state-dir', dir],
      { env: cliEnv(undefined) },
    );
    child.stdin?.end();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const crawlPid = child.pid ?? -1;
    await waitFor(() => (readRecords(out).length >= 3 ? true : undefined), { timeoutMs: 180_000, what: 'the first pages' });

    const server = JSON.parse(readFileSync(join(dir, 'redis', 'server.json'), 'utf8')) as { pid: number; port: number };
    const processes = descendantsOf(crawlPid);
    const workers = processes.filter((pid) => processTable().some((row) => row.pid === pid && row.cmdline.includes(' worker ')));
    expect(workers).toHaveLength(2);
    expect(alive(server.pid)).toBe(true);
    expect(readdirSync(join(dir, 'run')).filter((name) => name.startsWith('worker-config-'))).toHaveLength(1);

    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(crawlPid, 'SIGKILL');
    await exited;

    // Workers stop within their grace period, then the watchdog shuts the server down.
    await waitFor(() => (workers.every((pid) => !alive(pid)) ? true : undefined), { timeoutMs: 60_000, what: `workers to exit\n${stderr}` });
    await waitFor(() => (!alive(server.pid) ? true : undefined), { timeoutMs: 60_000, what: 'the embedded redis-server to stop' });
    await waitFor(() => (processes.every((pid) => !alive(pid)) ? true : undefined), { timeoutMs: 30_000, what: 'every process crawl started to exit' });
    expect(readdirSync(join(dir, 'run')).filter((name) => name.startsWith('worker-config-'))).toEqual([]);
    expect(existsSync(join(dir, 'redis', 'server.json'))).toBe(false);
    // The workers stopped gracefully (they said why), they did not die mid-write.
    expect(stderr).toContain('the crawl coordinator is gone');
    expect(() => readRecords(out)).not.toThrow();
  }, 360_000);
});
