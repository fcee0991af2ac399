import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { CRAWL_JOB_NAME, QUEUE_NAMES, crawlJobOptions, openCrawlQueue, type CrawlJobData, type CrawlQueue } from '@crawlq/queue';
import { queuePrefix } from '@crawlq/redis';
import {
  createDeadLetterAdmin,
  createDeadLetterRecorder,
  isFinalFailure,
  type AlertScheduler,
  type DeadLetterAdmin,
  type DeadLetterEntry,
  type DeadLetterRecorder,
} from '../src/index.js';

let redis: TestRedis;
let connection: { host: string; port: number; maxRetriesPerRequest: null };
const closers: (() => Promise<unknown>)[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'crawlq-dlq-'));

beforeAll(async () => {
  redis = await startTestRedis();
  connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await redis.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** A fresh namespace with its crawl queue, dead-letter recorder (worker side) and admin (`dlq`), closed after the test. */
function setup(options: { alerts?: AlertScheduler } = {}): { namespace: string; crawl: CrawlQueue; recorder: DeadLetterRecorder; dlq: DeadLetterAdmin } {
  const namespace = `t${randomUUID().slice(0, 8)}`;
  const crawl = openCrawlQueue(connection, namespace);
  const recorder = createDeadLetterRecorder({ connection, namespace, ...options });
  const dlq = createDeadLetterAdmin({ connection, namespace });
  closers.push(() => crawl.close(), () => recorder.close(), () => dlq.close());
  return { namespace, crawl, recorder, dlq };
}

function data(index: number, group = 'example.com'): CrawlJobData {
  return { url: `https://${group}/page/${index}`, depth: 1, group };
}

function httpError(status: number): Error {
  return Object.assign(new Error(`Fetching https://example.com/ failed after 2 retries: HTTP ${status}`), { status, code: 'ERR_HTTP_STATUS' });
}

async function addJob(crawl: CrawlQueue, id: string, jobData: CrawlJobData): Promise<Job<CrawlJobData>> {
  return crawl.add(CRAWL_JOB_NAME, jobData, { ...crawlJobOptions({ attempts: 2, backoffMs: 10 }), jobId: id });
}

/** Runs a crawl worker whose processor fails every attempt with `throwError()`. */
function failJobs(namespace: string, throwError: () => Error, onFailed?: (job: Job<CrawlJobData> | undefined, error: Error) => void): Worker<CrawlJobData> {
  const worker = new Worker<CrawlJobData>(
    QUEUE_NAMES.crawl,
    () => {
      throw throwError();
    },
    { connection, prefix: queuePrefix(namespace) },
  );
  if (onFailed) worker.on('failed', onFailed);
  closers.push(() => worker.close());
  return worker;
}

describe('record', () => {
  it('keeps one entry per crawl job id, with the failure fields, and alerts it once', async () => {
    const notified: DeadLetterEntry[] = [];
    const { crawl, recorder, dlq } = setup({ alerts: { notify: (entry) => Promise.resolve(void notified.push(entry)) } });
    const job = await addJob(crawl, 'fp-a1', { ...data(1), url: 'https://user:pw@example.com/page/1?token=s3cret&x=1' });
    const before = Date.now();

    const first = await recorder.record({ job, error: httpError(503), workerId: 'host:1' });
    const second = await recorder.record({ job, error: httpError(503), workerId: 'host:2' });

    expect(first).toEqual({ created: true });
    expect(second).toEqual({ created: false });
    expect(await dlq.count()).toBe(1);
    expect(notified.map((entry) => entry.id)).toEqual(['fp-a1']);
    const entry = await dlq.show('fp-a1');
    expect(entry).toMatchObject({
      id: 'fp-a1',
      url: 'https://example.com/page/1?token=***&x=1',
      group: 'example.com',
      depth: 1,
      reason: 'http-503',
      status: 503,
      errorClass: 'Error',
      attempts: 0,
      jobOptions: { attempts: 2 },
      workerId: 'host:1',
    });
    expect(entry?.job.url).toBe('https://user:pw@example.com/page/1?token=s3cret&x=1'); // Kept for retry.
    expect(entry?.message).toContain('HTTP 503');
    expect(Date.parse(entry?.lastFailedAt ?? '')).toBeGreaterThanOrEqual(before - 5);
    expect(entry?.firstFailedAt).toBe(entry?.lastFailedAt);
    // Recorded, so it left the crawl queue.
    expect(await crawl.getJob('fp-a1')).toBeUndefined();
  });

  it('records the final failure of a real worker (attempts 2, status 503) and nothing for a 404 result', async () => {
    const { namespace, crawl, recorder, dlq } = setup();
    const recorded: Promise<unknown>[] = [];
    failJobs(
      namespace,
      () => httpError(503),
      (job, error) => {
        if (job && isFinalFailure(job, error)) recorded.push(recorder.record({ job, error, workerId: 'w1' }));
      },
    );
    await addJob(crawl, 'fp-503', data(1));
    const entry = await waitFor(() => dlq.show('fp-503'), { what: 'the dead-letter entry', timeoutMs: 15_000, intervalMs: 25 });
    await Promise.all(recorded);
    expect(entry).toMatchObject({ attempts: 2, status: 503, reason: 'http-503', jobOptions: { attempts: 2 } });
    expect(Date.parse(entry.lastFailedAt)).toBeGreaterThanOrEqual(Date.parse(entry.firstFailedAt));
    expect(recorded).toHaveLength(1); // The first attempt was not final.
    expect(await crawl.getFailedCount()).toBe(0);

    // A page that answers 404 is a result, not a failure.
    const ok = setup();
    const okWorker = new Worker<CrawlJobData>(QUEUE_NAMES.crawl, () => Promise.resolve({ status: 404, links: 0, enqueued: 0 }), {
      connection,
      prefix: queuePrefix(ok.namespace),
    });
    closers.push(() => okWorker.close());
    okWorker.on('failed', (job, error) => {
      if (job && isFinalFailure(job, error)) void ok.recorder.record({ job, error, workerId: 'w1' });
    });
    const done = new Promise((resolve) => okWorker.once('completed', resolve));
    await addJob(ok.crawl, 'fp-404', data(2));
    await done;
    expect(await ok.dlq.count()).toBe(0);
    expect(await ok.dlq.show('fp-404')).toBeNull();
  });

  it('handleFailed notes the first failed attempt and records an UnrecoverableError at once', async () => {
    const { namespace, crawl, recorder, dlq } = setup();
    const handled: Promise<{ final: boolean; created: boolean }>[] = [];
    let calls = 0;
    failJobs(
      namespace,
      () => (++calls > 100 ? new Error('unreachable') : Object.assign(new Error('connect ETIMEDOUT 10.0.0.1:443'), { code: 'ETIMEDOUT' })),
      (job, error) => handled.push(recorder.handleFailed(job, error, 'w2')),
    );
    await addJob(crawl, 'fp-timeout', data(3));
    const entry = await waitFor(() => dlq.show('fp-timeout'), { what: 'the entry', timeoutMs: 15_000, intervalMs: 25 });
    expect((await Promise.all(handled)).map((result) => result.final)).toEqual([false, true]);
    expect(entry.reason).toBe('timeout');
    expect(entry.status).toBeNull();
    expect(Date.parse(entry.firstFailedAt)).toBeLessThan(Date.parse(entry.lastFailedAt));

    const permanent = setup();
    failJobs(permanent.namespace, () => new UnrecoverableError('PermanentFetchError: Fetching https://a:b@x.test/ refused (ssrf): 10.0.0.1 is private'), (job, error) => {
      void permanent.recorder.handleFailed(job, error, 'w3');
    });
    await addJob(permanent.crawl, 'fp-ssrf', data(4, 'x.test'));
    const ssrf = await waitFor(() => permanent.dlq.show('fp-ssrf'), { what: 'the ssrf entry', timeoutMs: 15_000, intervalMs: 25 });
    expect(ssrf).toMatchObject({ reason: 'ssrf', errorClass: 'PermanentFetchError', attempts: 1, status: null });
    expect(ssrf.message).not.toContain('a:b@');
  });
});

describe('reconcile', () => {
  it('records a final failure nobody recorded exactly once, and clears the failed set', async () => {
    const { namespace, crawl, recorder, dlq } = setup();
    // The worker "dies" right after the final failure: no failed listener at all.
    const worker = failJobs(namespace, () => httpError(502));
    await addJob(crawl, 'fp-lost', data(5));
    await addJob(crawl, 'fp-kept', data(6));
    await waitFor(async () => (await crawl.getFailedCount()) === 2, { what: 'two failed crawl jobs', timeoutMs: 15_000, intervalMs: 25 });
    await worker.close();
    // One was recorded but its removal from the crawl queue did not happen.
    const kept = await crawl.getJob('fp-kept');
    expect((await recorder.record({ job: kept!, error: httpError(502), workerId: 'w0', removeFromCrawlQueue: false })).created).toBe(true);

    expect(await recorder.reconcile(crawl, 'w9')).toBe(1);
    expect(await recorder.reconcile(crawl, 'w9')).toBe(0);
    expect(await dlq.count()).toBe(2);
    expect(await crawl.getFailedCount()).toBe(0);
    expect(await dlq.show('fp-lost')).toMatchObject({ reason: 'http-502', status: 502, attempts: 2, workerId: 'w9' });
    expect((await dlq.list()).filter((entry) => entry.id === 'fp-lost')).toHaveLength(1);
  });
});

describe('review operations', () => {
  async function seed(recorder: DeadLetterRecorder, crawl: CrawlQueue): Promise<void> {
    const errors = [httpError(503), Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), httpError(500)];
    for (let index = 0; index < 9; index++) {
      const group = index % 3 === 0 ? 'a.test' : 'b.test';
      const job = await addJob(crawl, `fp-${index}`, { ...data(index, group), blockedSince: 1 });
      await recorder.record({ job, error: errors[index % 3], workerId: 'w' });
      await new Promise((resolve) => setTimeout(resolve, 3)); // Distinct lastFailedAt: newest-first is testable.
    }
  }

  it('lists newest first with filters, shows, and counts', async () => {
    const { crawl, recorder, dlq } = setup();
    await seed(recorder, crawl);
    const all = await dlq.list();
    expect(all.map((entry) => entry.id)).toEqual(['fp-8', 'fp-7', 'fp-6', 'fp-5', 'fp-4', 'fp-3', 'fp-2', 'fp-1', 'fp-0']);
    expect((await dlq.list({ group: 'a.test' })).map((entry) => entry.id)).toEqual(['fp-6', 'fp-3', 'fp-0']);
    expect((await dlq.list({ reason: 'network' })).map((entry) => entry.id)).toEqual(['fp-7', 'fp-4', 'fp-1']);
    expect((await dlq.list({ group: 'b.test', reason: 'http-500', limit: 2 })).map((entry) => entry.id)).toEqual(['fp-8', 'fp-5']);
    expect((await dlq.list({ limit: 2, offset: 3 })).map((entry) => entry.id)).toEqual(['fp-5', 'fp-4']);
    const since = new Date(Date.parse(all[2]!.lastFailedAt));
    expect((await dlq.list({ since })).map((entry) => entry.id)).toEqual(['fp-8', 'fp-7', 'fp-6']);
    expect(await dlq.show('fp-4')).toMatchObject({ id: 'fp-4', group: 'b.test', reason: 'network', errorClass: 'Error' });
    expect(await dlq.show('nope')).toBeNull();
    expect(await dlq.stats()).toEqual({
      total: 9,
      byGroup: { 'a.test': 3, 'b.test': 6 },
      byReason: { 'http-503': 3, network: 3, 'http-500': 3 },
    });
  });

  it('pages through more entries than one page, ties included', async () => {
    const { crawl, recorder, dlq } = setup();
    const job = await addJob(crawl, 'template', data(0));
    // 450 entries with only three distinct timestamps: pages must not lose or repeat tied ones.
    for (let index = 0; index < 450; index++) {
      const finishedOn = 1_700_000_000_000 + (index % 3);
      await recorder.record({ job: { ...job, id: `bulk-${index}`, finishedOn, remove: () => Promise.resolve() }, error: httpError(503), workerId: 'w' });
    }
    const ids = (await dlq.list({ limit: 1000 })).map((entry) => entry.id);
    expect(ids).toHaveLength(450);
    expect(new Set(ids).size).toBe(450);
    expect((await dlq.stats()).total).toBe(450);
  });

  it('retries by id, group and all with a fresh attempt budget; twice adds one job', async () => {
    const { crawl, recorder, dlq } = setup();
    await seed(recorder, crawl);
    const policy = { attempts: 5, backoffMs: 100 };

    expect(await dlq.retry({ ids: ['fp-1', 'fp-1', 'missing'] }, crawl, policy)).toEqual({ retried: 1 });
    expect(await dlq.retry({ ids: ['fp-1'] }, crawl, policy)).toEqual({ retried: 0 });
    const job = await crawl.getJob('fp-1');
    expect(job?.opts.attempts).toBe(5);
    expect(job?.attemptsMade).toBe(0);
    expect(job?.data).toEqual({ url: 'https://b.test/page/1', depth: 1, group: 'b.test' }); // blockedSince cleared
    expect(await dlq.show('fp-1')).toBeNull();
    expect(await crawl.getWaitingCount()).toBe(1);

    expect(await dlq.retry({ group: 'a.test' }, crawl, policy)).toEqual({ retried: 3 });
    expect(await dlq.count()).toBe(5);
    expect(await dlq.retry({ all: true }, crawl, policy)).toEqual({ retried: 5 });
    expect(await dlq.count()).toBe(0);
    expect(await crawl.getWaitingCount()).toBe(9);
  });

  it('retries a job whose failed copy is still in the crawl queue', async () => {
    const { namespace, crawl, recorder, dlq } = setup();
    const worker = failJobs(namespace, () => httpError(503));
    await addJob(crawl, 'fp-stuck', data(1));
    await waitFor(async () => (await crawl.getFailedCount()) === 1, { what: 'the failed job', timeoutMs: 15_000, intervalMs: 25 });
    await worker.close();
    const failed = await crawl.getJob('fp-stuck');
    await recorder.record({ job: failed!, error: httpError(503), workerId: 'w', removeFromCrawlQueue: false });
    expect(await dlq.retry({ ids: ['fp-stuck'] }, crawl, { attempts: 3, backoffMs: 10 })).toEqual({ retried: 1 });
    expect(await crawl.getJobState('fp-stuck')).toBe('waiting');
    expect((await crawl.getJob('fp-stuck'))?.attemptsMade).toBe(0);
  });

  it('purges by age, by id and all; trims to a retention', async () => {
    const { crawl, recorder, dlq } = setup();
    const job = await addJob(crawl, 'template', data(0));
    const now = Date.now();
    const ages = [10 * 86_400_000, 5 * 86_400_000, 3_600_000, 0];
    for (const [index, age] of ages.entries()) {
      await recorder.record({ job: { ...job, id: `age-${index}`, finishedOn: now - age, remove: () => Promise.resolve() }, error: httpError(503), workerId: 'w' });
    }
    expect(await dlq.purge({ olderThanMs: 7 * 86_400_000 })).toEqual({ purged: 1 });
    expect(await recorder.trim({ maxAgeMs: 86_400_000 })).toEqual({ purged: 1 });
    expect(await recorder.trim({ maxCount: 1 })).toEqual({ purged: 1 });
    expect((await dlq.list()).map((entry) => entry.id)).toEqual(['age-3']);
    expect(await dlq.purge({ ids: ['age-3', 'age-3'] })).toEqual({ purged: 1 });

    await seed(recorder, crawl);
    expect(await dlq.purge({ all: true })).toEqual({ purged: 9 });
    expect(await dlq.count()).toBe(0);
    expect(await dlq.list()).toEqual([]);
  });

  it('never lets a worker process an entry: the dead-letter queue is paused', async () => {
    const { namespace, crawl, recorder, dlq } = setup();
    await seed(recorder, crawl);
    let processed = 0;
    const stray = new Worker(QUEUE_NAMES.deadLetter, () => Promise.resolve(void processed++), { connection, prefix: queuePrefix(namespace) });
    closers.push(() => stray.close());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processed).toBe(0);
    expect(await dlq.count()).toBe(9);
  });

  it('exports JSON lines and quoted CSV that parse back', async () => {
    const { crawl, recorder, dlq } = setup();
    const job = await addJob(crawl, 'fp-csv', { url: 'https://c.test/a,b?q="x"', depth: 2, group: 'c.test' });
    await recorder.record({ job, error: new Error('bad, "quoted"\nmultiline =cmd'), workerId: 'w' });
    await seed(recorder, crawl);

    const jsonl = join(tmp, `${randomUUID()}.jsonl`);
    expect(await dlq.export(jsonl)).toEqual({ written: 10 });
    const lines = readFileSync(jsonl, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as DeadLetterEntry);
    expect(lines).toHaveLength(10);
    expect(lines.find((entry) => entry.id === 'fp-csv')?.job).toEqual({ url: 'https://c.test/a,b?q="x"', depth: 2, group: 'c.test' });

    const csv = join(tmp, `${randomUUID()}.csv`);
    expect(await dlq.export(csv)).toEqual({ written: 10 });
    const rows = parseCsv(readFileSync(csv, 'utf8'));
    expect(rows[0]).toEqual(['id', 'url', 'group', 'depth', 'reason', 'status', 'errorClass', 'message', 'attempts', 'maxAttempts', 'firstFailedAt', 'lastFailedAt', 'workerId']);
    expect(rows).toHaveLength(11);
    const row = rows.find((cells) => cells[0] === 'fp-csv')!;
    expect(row[1]).toBe('https://c.test/a,b?q="x"');
    expect(row[7]).toBe('bad, "quoted"\nmultiline =cmd');
    expect(row[5]).toBe('');
    expect(rows.find((cells) => cells[0] === 'fp-0')?.[5]).toBe('503');
  });
});

/** A strict RFC 4180 reader, to prove the export is one. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
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
      index++;
    } else field += char;
  }
  return rows;
}
