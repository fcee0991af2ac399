import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { createDeadLetterAdmin, type DeadLetterAdmin } from '@crawlq/dead-letter';
import { readCrawlProgress } from '@crawlq/frontier';
import { openCrawlQueue, QUEUE_NAMES, type CrawlCounts } from '@crawlq/queue';
import { queuePrefix, stateKeyPrefix } from '@crawlq/redis';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exited, runCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { readRecords } from './support/records.js';

/** One line of `crawlq dlq list --json`. */
interface ListedEntry {
  id: string;
  url: string;
  group: string;
  reason: string;
  status: number | null;
  attempts: number;
  failedAt: string;
  firstFailedAt: string;
  errorClass: string;
  message: string;
}

const FAILING = '127.0.0.80';
const HEALTHY = '127.0.0.81';

let redis: TestRedis;
let site: DemoSite;
const fleets: Fleet[] = [];
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: [FAILING, HEALTHY], pagesPerHost: 6, linksPerPage: 1 });
});
afterEach(async () => {
  await Promise.all(fleets.splice(0).map((fleet) => fleet.stop()));
});
afterAll(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await site.close();
  await redis.stop();
});

/**
 * Flags for everything that enqueues (the job options are the producer's) and
 * for the workers: two attempts 100 ms apart, no got retries inside an attempt.
 */
function crawlFlags(namespace: string): string[] {
  return ['--namespace', namespace, '--allow-private-network', '--attempts', '2', '--backoff', '100ms', '--max-depth', '0', '--rate', 'none', '--domain-concurrency', '4'];
}

function newFleet(namespace: string, extra: (dir: string) => string[] = () => [], register = true): { fleet: Fleet; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-dlq-'));
  const fleet = new Fleet({
    redisUrl: redis.url,
    dir,
    flags: [...crawlFlags(namespace), '--concurrency', '4', '--fetch-retries', '0', '--grace-period', '2s', '--state-dir', join(dir, 'state'), ...extra(dir)],
  });
  if (register) fleets.push(fleet);
  return { fleet, dir };
}

async function cli(fleet: Fleet, args: string[]): Promise<string> {
  const result = await runCli(args, { env: fleet.env });
  expect(result.code, `crawlq ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** In-process views for polling: a CLI run costs seconds on a loaded machine. */
function probes(namespace: string): { deadLetters: DeadLetterAdmin; counts(): Promise<CrawlCounts> } {
  const deadLetters = createDeadLetterAdmin({ connection: { url: redis.url }, namespace });
  const queue = openCrawlQueue({ url: redis.url }, namespace);
  closers.push(() => deadLetters.close(), () => queue.close());
  const client = redis.client();
  // The backlog counts as waiting: a crawl is over only when it is empty too.
  const counts = async (): Promise<CrawlCounts> => {
    const { backlog, delayedDue: _due, ...queued } = await readCrawlProgress(client, namespace);
    return { ...queued, waiting: queued.waiting + backlog };
  };
  return { deadLetters, counts };
}

async function dlqList(fleet: Fleet): Promise<ListedEntry[]> {
  const result = await fleet.cli(['dlq', 'list', '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ListedEntry[];
}

/** A minimal RFC 4180 reader: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index += 1;
    } else field += char;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

describe('dead letters of a host that always answers 503', () => {
  const namespace = 'dlq-e2e';
  let fleet: Fleet;
  let dir: string;
  let probe: ReturnType<typeof probes>;
  let failing: string[];
  let missing: string[];

  beforeAll(() => {
    failing = [1, 2, 3].map((page) => site.urlOf(FAILING, page));
    missing = [1, 2].map((n) => `http://${HEALTHY}:${site.port}/missing/${n}`);
    probe = probes(namespace);
    site.setFaults([{ host: FAILING, status: 503 }]);
  });

  it('503 jobs are dead-lettered after their attempts with status and attempt count; 404s are results; status counts them', { timeout: 90_000 }, async () => {
    // Later tests use this fleet's settings for admin commands; afterEach stops its worker.
    ({ fleet, dir } = newFleet(namespace));
    await fleet.start();
    const enqueued = await cli(fleet, ['enqueue', ...failing, ...missing, ...crawlFlags(namespace)]);
    expect(enqueued).toContain('accepted 5');
    await waitFor(async () => ((await probe.deadLetters.count()) >= failing.length ? true : undefined), { timeoutMs: 60_000, what: 'three dead letters' });
    await waitFor(async () => {
      const counts = await probe.counts();
      return counts.waiting + counts.delayed + counts.active === 0 ? true : undefined;
    }, { timeoutMs: 60_000, what: 'the crawl to finish' });

    const [entries, status] = await Promise.all([dlqList(fleet), fleet.status()]);
    expect(entries.map((entry) => entry.url).sort()).toEqual([...failing].sort());
    for (const entry of entries) {
      expect(entry).toMatchObject({ reason: 'http-503', status: 503, attempts: 2, group: `${FAILING}:${site.port}` });
      expect(entry.id).toMatch(/\S/);
      expect(Number.isNaN(Date.parse(entry.failedAt))).toBe(false);
      // The first attempt failed at least a backoff before the last.
      expect(Date.parse(entry.firstFailedAt)).toBeLessThan(Date.parse(entry.failedAt));
      // Two attempts, no got retries: exactly two requests reached the server.
      expect(site.requestCount(entry.url)).toBe(2);
    }
    expect(status).toMatchObject({ deadLettered: 3, done: true, failed: 0 });

    // The 404s are results, fetched once, and none of the 503 pages is.
    const records = fleet.resultFiles().flatMap((file) => readRecords(file));
    expect(records.map((record) => [record.url, record.status]).sort()).toEqual(missing.map((url) => [url, 404]).sort());
    for (const url of missing) expect(site.requestCount(url)).toBe(1);
  });

  it('dlq retry puts a job back; once the host recovers it completes and the entry is gone', { timeout: 90_000 }, async () => {
    const before = await probe.deadLetters.list();
    expect(before).toHaveLength(3);
    const target = before[0]!;
    // No worker runs (afterEach stopped it): the retried job must wait in the crawl queue.
    expect(await cli(fleet, ['dlq', 'retry', target.id, ...crawlFlags(namespace)])).toContain('retried 1');
    expect(await probe.deadLetters.show(target.id)).toBeNull();
    expect(await probe.deadLetters.count()).toBe(2);
    const queued = await probe.counts();
    expect(queued.waiting + queued.delayed).toBe(1);
    // Retrying the same id again adds nothing, and `show` no longer finds it.
    const [again, shown] = await Promise.all([cli(fleet, ['dlq', 'retry', target.id, ...crawlFlags(namespace)]), fleet.cli(['dlq', 'show', target.id])]);
    expect(again).toContain('retried 0');
    expect(shown.code).toBe(1);
    const requeued = await probe.counts();
    expect(requeued.waiting + requeued.delayed).toBe(1);

    site.setFaults([]);
    const { fleet: workers } = newFleet(namespace);
    await workers.start();
    const record = await waitFor(() => readRecords(workers.resultFiles()[0]!).find((candidate) => candidate.url === target.job.url), {
      timeoutMs: 60_000,
      what: `a record of ${target.url}`,
    });
    expect(record).toMatchObject({ status: 200, attempts: 1 });
    await waitFor(async () => {
      const counts = await probe.counts();
      return counts.waiting + counts.delayed + counts.active === 0 ? true : undefined;
    }, { what: 'the crawl to finish' });
    const after = await probe.deadLetters.list();
    expect(after.map((entry) => entry.id).sort()).toEqual(before.slice(1).map((entry) => entry.id).sort());
  });

  it('dlq export writes CSV and JSONL that parse back to the entries', { timeout: 60_000 }, async () => {
    const listed = await probe.deadLetters.list();
    expect(listed).toHaveLength(2);
    const csvFile = join(dir, 'dead.csv');
    const jsonlFile = join(dir, 'dead.jsonl');
    const written = await Promise.all([
      cli(fleet, ['dlq', 'export', '--out', csvFile, '--namespace', namespace]),
      cli(fleet, ['dlq', 'export', '--out', jsonlFile, '--namespace', namespace]),
    ]);
    for (const output of written) expect(output).toContain('wrote 2 dead letters');

    const [header, ...rows] = parseCsv(readFileSync(csvFile, 'utf8'));
    expect(header).toEqual(['id', 'url', 'group', 'depth', 'reason', 'status', 'errorClass', 'message', 'attempts', 'maxAttempts', 'firstFailedAt', 'lastFailedAt', 'workerId']);
    const csv = rows.map((row) => Object.fromEntries(header!.map((column, index) => [column, row[index]])));
    expect(csv.map((row) => row.id).sort()).toEqual(listed.map((entry) => entry.id).sort());
    for (const row of csv) {
      const entry = listed.find((candidate) => candidate.id === row.id)!;
      expect(row).toEqual({
        id: entry.id,
        url: entry.url,
        group: entry.group,
        depth: '0',
        reason: 'http-503',
        status: '503',
        errorClass: entry.errorClass,
        message: entry.message,
        attempts: '2',
        maxAttempts: '2',
        firstFailedAt: entry.firstFailedAt,
        lastFailedAt: entry.lastFailedAt,
        workerId: entry.workerId,
      });
    }

    const lines = readFileSync(jsonlFile, 'utf8').split('\n').filter((line) => line !== '');
    const exported = lines.map((line) => JSON.parse(line) as unknown);
    // Every field, the original job included.
    expect(exported).toEqual(expect.arrayContaining(listed));
    expect(exported).toHaveLength(listed.length);
    // Written under a temporary name, then renamed: no partial file is left.
    expect(readdirSync(dir).filter((name) => name.includes('.partial-'))).toEqual([]);
  });

  it('dlq purge refuses without a terminal or --yes, and --all --yes empties the queue', { timeout: 60_000 }, async () => {
    const refused = await fleet.cli(['dlq', 'purge', '--all']);
    expect(refused.code).toBe(2);
    expect(await probe.deadLetters.count()).toBe(2);
    expect(await cli(fleet, ['dlq', 'purge', '--all', '--yes', '--namespace', namespace])).toContain('purged 2');
    expect(await probe.deadLetters.list()).toEqual([]);
    expect((await fleet.status()).deadLettered).toBe(0);
  });
});

describe('a worker killed right after a final failure', () => {
  // The DLQ write is made to fail by a key of the wrong type, so the final
  // failure deterministically leaves the job unrecorded in the crawl queue's
  // failed set: the state a kill -9 between BullMQ's moveToFailed and the DLQ
  // write leaves behind, without racing the worker for that moment.
  const cases = [
    { stage: 'before anything of the entry was written', key: (ns: string) => `${queuePrefix(ns)}:${QUEUE_NAMES.deadLetter}:meta`, entryJob: false },
    { stage: 'after the entry job, before its index, alert and removal', key: (ns: string) => `${stateKeyPrefix(ns)}:dlq:index`, entryJob: true },
  ];

  // Concurrent: most of each case is waiting for processes to start.
  it.concurrent.for(cases)('killed $stage: after the next workers start up, the entry exists exactly once', { timeout: 120_000 }, async ({ key, entryJob }, { expect }) => {
    site.setFaults([{ host: FAILING, status: 503 }]);
    const namespace = `dlq-kill-${entryJob ? 'b' : 'a'}`;
    const url = site.urlOf(FAILING, entryJob ? 5 : 4);
    const client = redis.client();
    const queue = openCrawlQueue({ url: redis.url }, namespace);
    const { deadLetters } = probes(namespace);
    const { fleet, dir } = newFleet(namespace, (base) => ['--alert-delay', '1s', '--outbox-dir', join(base, 'outbox')], false);
    const outbox = join(dir, 'outbox');
    try {
      await client.set(key(namespace), 'not what BullMQ expects');
      const victim = await fleet.start();
      await cli(fleet, ['enqueue', url, ...crawlFlags(namespace)]);
      await waitFor(() => (fleet.logs[0]?.includes(`could not dead-letter ${url}`) ? true : undefined), {
        timeoutMs: 60_000,
        what: 'the final failure',
      });
      victim.kill('SIGKILL');
      await exited(victim);

      await client.del(key(namespace));
      const failed = await queue.getFailed();
      expect(failed.map((job) => job?.data.url)).toEqual([url]);
      const id = failed[0]!.id!;
      expect(await deadLetters.count()).toBe(0);
      expect(await client.exists(`${queuePrefix(namespace)}:${QUEUE_NAMES.deadLetter}:${id}`)).toBe(entryJob ? 1 : 0);

      // Two workers start at once; both reconcile at start-up.
      await Promise.all([fleet.start(), fleet.start()]);
      const [entries, status] = await Promise.all([dlqList(fleet), fleet.status()]);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ id, url, reason: 'http-503', status: 503, attempts: 2 });
      // The first failed attempt, noted before the crash, is kept.
      expect(Date.parse(entries[0]!.firstFailedAt)).toBeLessThan(Date.parse(entries[0]!.failedAt));
      expect(status).toMatchObject({ deadLettered: 1, failed: 0 });
      const reconciled = fleet.logs
        .slice(1)
        .map((log) => Number(/reconciled (\d+) dead letter/.exec(log)?.[1] ?? 0))
        .reduce((sum, count) => sum + count, 0);
      expect(reconciled, fleet.logs.join('\n')).toBe(1);

      // Alerted once: one e-mail in the outbox, about one page.
      const emails = await waitFor(
        () => {
          const files = existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : [];
          return files.length > 0 ? files : undefined;
        },
        { timeoutMs: 30_000, what: 'the alert in the outbox' },
      );
      await sleep(2_000);
      expect(readdirSync(outbox).filter((name) => name.endsWith('.eml'))).toEqual(emails);
      expect(emails).toHaveLength(1);
      expect(readFileSync(join(outbox, emails[0]!), 'utf8')).toMatch(/Subject: \[crawlq\] 1 page dead-lettered/);
    } finally {
      await fleet.stop();
      await queue.close();
      client.disconnect();
    }
  });
});
