import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { readWarcWithAllReaders, resolveWarcPointer, startTestRedis, type TestRedis, waitFor, type WarcPointer } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited } from './support/cli.js';
import { Fleet } from './support/fleet.js';

// WARC files must always resolve: a page record's `warc: {file, offset, length}`
// names a closed file holding its response and request records, after a worker
// was killed mid-write and after the disk filled up. Every file is read by
// three readers (a strict member walker, warcio, node-warc).

let redis: TestRedis;
let site: DemoSite;
const fleets: Fleet[] = [];

beforeAll(async () => {
  [redis, site] = await Promise.all([
    startTestRedis(),
    startDemoSite({ hosts: ['127.0.0.31', '127.0.0.32'], pagesPerHost: 80, linksPerPage: 4, crossHostLinksPerPage: 1, brokenLinksPerPage: 0 }),
  ]);
});
afterAll(async () => {
  await Promise.allSettled(fleets.map((fleet) => fleet.stop()));
  await Promise.allSettled([site?.close(), redis?.stop()]);
});

interface PageLine {
  url: string;
  finalUrl?: string;
  status?: number;
  skipped?: string;
  warc?: WarcPointer;
}

/** The records of every worker's results file; a line a kill -9 cut short is no record. */
function records(files: readonly string[]): PageLine[] {
  return files.flatMap((file) => {
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8').split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line) as PageLine];
      } catch {
        return [];
      }
    });
  });
}

/** The crawl's definition, as `enqueue` publishes it, at `rate` per host. */
const definitionAt = (rate: string) => ['--allow-private-network', '--rate', rate, '--domain-concurrency', '2', '--scope', 'any', '--max-depth', '50', '--request-timeout', '10s', '--lease-time', '10s'];
const workerFlagsAt = (rate: string, namespace: string) => ['--namespace', namespace, ...definitionAt(rate), '--stall-timeout', '5s', '--grace-period', '5s'];
// The kill case is slow (3 pages/s per host): its crawl must outlast three workers' start-up on a loaded machine.
const KILL_RATE = '3/1s';
// The full disk needs no such wait: it fills after a few pages whatever the pace.
const FULL_DISK_RATE = '15/1s';

/** Every page record's pointer resolves; the failure counts those that do not, as an operator would. */
async function resolveAll(dir: string, pages: readonly PageLine[]): Promise<void> {
  const failures: string[] = [];
  for (const page of pages) {
    try {
      if (!page.warc) throw new Error('no WARC pointer');
      const [response] = await resolveWarcPointer(dir, page.warc);
      if (response?.headers['warc-target-uri'] !== page.finalUrl) throw new Error(`the response there is for ${response?.headers['warc-target-uri']}`);
    } catch (error) {
      failures.push(`${page.url} -> ${JSON.stringify(page.warc)}: ${(error as Error).message}`);
    }
  }
  expect(failures, `${failures.length} of ${pages.length} records do not resolve, first: ${failures[0]}`).toEqual([]);
}

/** The files in `dir` that some reader cannot read whole, with why. */
async function unreadable(dir: string): Promise<string[]> {
  const failures: string[] = [];
  for (const name of readdirSync(dir)) {
    await readWarcWithAllReaders(readFileSync(join(dir, name)), name).catch((error: Error) => failures.push(error.message));
  }
  return failures;
}

describe('WARC files always resolve', () => {
  it('kill -9 of a worker mid-write: a worker that finds its files closes them at the last whole record once its lease is over, and leaves a live worker\'s alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-kill-'));
    const warcDir = join(dir, 'warc');
    const namespace = 'warckill';
    const fleet = new Fleet({ redisUrl: redis.url, dir, flags: workerFlagsAt(KILL_RATE, namespace) });
    fleets.push(fleet);
    const enqueued = await fleet.cli(['enqueue', ...site.seeds, ...definitionAt(KILL_RATE)]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    // Small files: the victim leaves closed files and an open one, the survivor rotates while the third one starts.
    const archiveFlags = ['--warc', warcDir, '--warc-max-size', '24kb'];
    const warcFlags = [...archiveFlags, '--concurrency', '4'];
    const survivorFlags = [...archiveFlags, '--concurrency', '1'];
    // The victim alone first, so that it has the crawl's jobs: a job goes on with its group's next URLs, so a
    // worker started second found the queue nearly empty (3 of 160 pages were the victim's on a slow machine).
    const victim = await fleet.start(warcFlags);
    const victimResults = () => records(fleet.resultFiles().slice(0, 1)).filter((page) => page.warc);
    // Killed once its latest record points into the file it is writing.
    const writingRecorded = () => {
      const latest = victimResults();
      const last = latest.at(-1)?.warc?.file;
      return latest.length >= 12 && last !== undefined && existsSync(join(warcDir, `${last}.open`)) ? true : undefined;
    };
    const progress = () => {
      const [all, latest] = [records(fleet.resultFiles()), victimResults()];
      return `the victim to archive 12 pages (it has ${latest.length}, its latest in ${latest.at(-1)?.warc?.file ?? 'none'}; ${all.length} records in all; files: ${readdirSync(warcDir).join(', ')})`;
    };
    await waitFor(writingRecorded, { timeoutMs: 180_000, intervalMs: 50, what: progress });
    // The survivor next, while the victim writes: its start-up recovery must leave the live victim's open file alone
    // (the victim's files are the third worker's to recover, once it is dead).
    const survivor = await fleet.start(survivorFlags);
    victim.kill('SIGKILL');
    await exited(victim);
    const victimOpen = readdirSync(warcDir).filter((name) => name.endsWith('.open') && name.includes(`-${victim.pid}-`));
    // What makes the case: the killed worker's records point into a file that is still `.open`.
    expect(victimOpen).toHaveLength(1);
    const pointingIntoOpen = victimResults().filter((page) => `${page.warc!.file}.open` === victimOpen[0]);
    expect(pointingIntoOpen.length).toBeGreaterThan(0);

    // A worker that starts now, beside the live survivor, sharing the directory.
    const restarted = await fleet.start(warcFlags);
    // Within a lease's life (20 s) on an idle machine; the checks below say what is wrong if it never happens.
    await waitFor(() => (readdirSync(warcDir).includes(victimOpen[0]!) ? undefined : true), { timeoutMs: 120_000, intervalMs: 200, what: `${victimOpen[0]} to be recovered` }).catch(() => undefined);
    await fleet.waitUntilDone(300_000);
    const codes = await fleet.stop();
    expect([codes[1], codes[2]], fleet.logs.join('\n').slice(-3_000)).toEqual([0, 0]);
    expect(survivor.exitCode).toBe(0);
    expect(restarted.exitCode).toBe(0);

    // Every page record of every worker, the victim's included, resolves to its records in a closed file.
    const pages = records(fleet.resultFiles()).filter((page) => page.skipped === undefined);
    expect(pages.length).toBeGreaterThan(100);
    await resolveAll(warcDir, pages);
    // Recovered once: the victim's file, by the survivor or the third worker (each found it leased at its start and
    // looked again once the lease could have ended), and nothing of a live worker's (each closed its own files).
    const recoveredLines = fleet.logs.slice(1).flatMap((log) => log.split('\n').filter((line) => line.includes('recovered the WARC file')));
    expect(recoveredLines, fleet.logs.slice(1).join('\n')).toHaveLength(1);
    expect(recoveredLines[0]).toContain(victimOpen[0]!.slice(0, -'.open'.length));
    const files = readdirSync(warcDir);
    expect(files.filter((name) => name.endsWith('.open'))).toEqual([]);
    expect(await unreadable(warcDir)).toEqual([]);
  }, 600_000);

  describe('on a full disk', () => {
    // A real 48 KiB file system: tests run as root here; without mount the test is skipped and says why.
    const mountPoint = join(tmpdir(), `crawlq-warc-enospc-${process.pid}`);
    let mounted = false;
    beforeAll(() => {
      mkdirSync(mountPoint, { recursive: true });
      mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=48k', 'tmpfs', mountPoint]).status === 0;
    });
    const fullFleets: Fleet[] = [];
    afterAll(async () => {
      // Workers first: a file still open keeps the mount busy.
      await Promise.allSettled(fullFleets.map((fleet) => fleet.stop()));
      if (mounted && spawnSync('umount', [mountPoint]).status !== 0) spawnSync('umount', ['-l', mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    });

    it('ENOSPC: files end at a whole record, the pages that did not fit fail once with reason warc naming --warc, the crawl goes on to its end', async (context) => {
      if (!mounted) context.skip('cannot mount a tmpfs here');
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-full-'));
      const namespace = 'warcfull';
      const fleet = new Fleet({ redisUrl: redis.url, dir, flags: workerFlagsAt(FULL_DISK_RATE, namespace) });
      fullFleets.push(fleet);
      const enqueued = await fleet.cli(['enqueue', ...site.seeds, ...definitionAt(FULL_DISK_RATE)]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const worker = await fleet.start(['--warc', mountPoint, '--concurrency', '4']);
      // Several pages refused by the disk first: the case is the crawl going on past them.
      const refused = () => (fleet.logs[0]!.match(/dead-lettered \S+: warc: /g) ?? []).length;
      await waitFor(() => (refused() >= 8 ? true : undefined), { timeoutMs: 300_000, intervalMs: 200, what: '8 pages refused by the full disk' }).catch(async (error: Error) => {
        throw new Error(`${error.message}; the worker ${worker.exitCode === null && worker.signalCode === null ? 'runs' : `exited (${worker.exitCode ?? worker.signalCode})`}; unreadable files: ${JSON.stringify(await unreadable(mountPoint))}\n${fleet.logs[0]!.slice(-2_000)}`);
      });
      // Then to its end: every page that did not fit fails once, and the group's
      // next URLs go on at its pace (about 120 refused pages at 15/s per host:
      // seconds alone; the bound is for a loaded machine).
      await fleet.waitUntilDone(400_000).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await fleet.status())}`);
      });
      const status = await fleet.status();
      const [code] = await fleet.stop();
      expect(code, fleet.logs[0]).toBe(0);
      expect(worker.exitCode).toBe(0);

      // What the disk holds ends at whole records: every reader reads every file to its end.
      expect(await unreadable(mountPoint)).toEqual([]);
      const files = readdirSync(mountPoint);
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((name) => name.endsWith('.open'))).toEqual([]);
      const listed = await fleet.cli(['dlq', 'list', '--json', '--limit', '1000']);
      expect(listed.code, listed.stderr).toBe(0);
      const dead = JSON.parse(listed.stdout) as { url: string; reason: string; attempts: number }[];
      // The disk held some pages, not all: the rest are dead letters, each tried once (no retry heals a full disk).
      const unarchived = dead.filter((entry) => entry.reason === 'warc');
      expect(unarchived.length).toBeGreaterThan(0);
      for (const entry of unarchived) expect(entry.attempts, entry.url).toBe(1);
      expect(fleet.logs[0]).toMatch(/dead-lettered \S+: warc: --warc: could not write to \S+ \(ENOSPC: no space left on device/);
      const pages = records(fleet.resultFiles()).filter((page) => page.skipped === undefined);
      expect(pages.length).toBeGreaterThan(10);
      await resolveAll(mountPoint, pages);
      // A page is archived and recorded, or a dead letter, never both (the links of a page that failed are not followed).
      const recorded = new Set(pages.map((page) => page.url));
      expect(pages).toHaveLength(recorded.size);
      expect(unarchived.filter((entry) => recorded.has(entry.url))).toEqual([]);
      // None lost: every URL the crawl admitted is a record or a dead letter.
      const handled = new Set([...records(fleet.resultFiles()).map((page) => page.url), ...dead.map((entry) => entry.url)]);
      expect(handled.size).toBe(status.seen);
      expect(dead).toHaveLength(status.deadLettered);
    }, 600_000);
  });
});
