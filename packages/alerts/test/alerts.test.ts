import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, freePort, mailHeader, mimePart, waitFor, type TestRedis } from '@crawlq/testing';
import { CRAWL_JOB_NAME, QUEUE_NAMES, openCrawlQueue, openQueue, type CrawlQueue } from '@crawlq/queue';
import { takeDigest } from '../src/lua/take-digest.js';
import { alertKeys } from '../src/keys.js';
import { createDeadLetterAdmin, createDeadLetterRecorder, type DeadLetterRecorder } from '@crawlq/dead-letter';
import { createAlerts, type AlertMailConfig, type Alerts, type CreateAlertsOptions } from '../src/index.js';
import { groupCounts, startSmtp, type TestSmtp } from './helpers.js';

let redis: TestRedis;
let connection: { host: string; port: number; maxRetriesPerRequest: null };
const closers: (() => Promise<unknown>)[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'crawlq-alerts-'));

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

function mail(overrides: Partial<AlertMailConfig> = {}): AlertMailConfig {
  return {
    from: 'crawlq@example.test',
    to: ['ops@example.test'],
    outboxDir: join(tmp, randomUUID()),
    firstDelayMs: 50,
    windowMs: 60_000,
    reviewCommand: 'pnpm crawlq dlq list',
    ...overrides,
  };
}

/** One "process": its own connections for the crawl queue, dead letters and alerts. */
function node(namespace: string, options: Omit<CreateAlertsOptions, 'connection' | 'namespace'>): { alerts: Alerts; dlq: DeadLetterRecorder; crawl: CrawlQueue; logs: string[] } {
  const logs: string[] = [];
  const alerts = createAlerts({ connection, namespace, log: (line) => logs.push(line), ...options });
  const dlq = createDeadLetterRecorder({ connection, namespace, alerts });
  const crawl = openCrawlQueue(connection, namespace);
  closers.push(() => crawl.close(), () => dlq.close(), () => alerts.close());
  return { alerts, dlq, crawl, logs };
}

let jobCounter = 0;
/** Dead-letters one fresh crawl job of `group`. */
async function deadLetter(target: { dlq: DeadLetterRecorder; crawl: CrawlQueue }, group: string, url?: string): Promise<void> {
  jobCounter += 1;
  const job = await target.crawl.add(CRAWL_JOB_NAME, { url: url ?? `https://${group}/p/${jobCounter}`, depth: 0, group }, { jobId: `fp${jobCounter}x` });
  const error = Object.assign(new Error('Fetching failed after 2 retries: HTTP 503'), { status: 503 });
  await target.dlq.record({ job, error, workerId: 'test' });
}

function smtpServer(server: TestSmtp): TestSmtp {
  closers.push(() => server.close());
  return server;
}

function totalOf(raw: string): number {
  return Number(/\[crawlq\] (\d+) pages? dead-lettered/.exec(mailHeader(raw, 'subject') ?? '')?.[1] ?? NaN);
}

describe('digests', () => {
  it('sends one first-failure e-mail and one digest for 50 events from 3 processes with 3 alert workers', async () => {
    const smtp = smtpServer(await startSmtp());
    const namespace = `d${randomUUID().slice(0, 8)}`;
    const config = { mail: mail({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, firstDelayMs: 300, windowMs: 3_000 }) };
    const nodes = [node(namespace, config), node(namespace, config), node(namespace, config)];
    for (const each of nodes) each.alerts.startWorker();
    const groups = ['a.test', 'b.test', 'c.test', 'd.test', 'e.test'];
    const expected: Record<string, number> = {};
    const send = async (index: number) => {
      const group = groups[index % groups.length]!;
      expected[group] = (expected[group] ?? 0) + 1;
      await deadLetter(nodes[index % 3]!, group);
    };

    // A burst: the first e-mail goes out ~300 ms after it.
    await Promise.all(Array.from({ length: 6 }, (_, index) => send(index)));
    await waitFor(() => smtp.messages.length >= 1, { what: 'the first e-mail', timeoutMs: 15_000, intervalMs: 25 });
    // The storm goes on: these wait for the window, all in one digest (if they all came before it was over).
    for (let batch = 0; batch < 4; batch++) {
      await Promise.all(Array.from({ length: 11 }, (_, index) => send(6 + batch * 11 + index)));
      await sleep(150);
    }
    const stormOverAt = Date.now();
    const mailed = () => smtp.messages.reduce((sum, raw) => sum + totalOf(raw), 0);
    await waitFor(() => smtp.messages.length >= 2 && mailed() >= 50, { what: () => `every event in a digest (${mailed()} so far)`, timeoutMs: 30_000, intervalMs: 25 });
    await sleep(1_500); // Room for a wrong further e-mail to show up.

    // Not cut before the window (3 s) was over, judged by when each digest was
    // cut (Redis clock, in the job's data): when each e-mail reached the server
    // also depends on how long the first one took to send on a loaded machine.
    const digests = openQueue(QUEUE_NAMES.alerts, { connection, namespace });
    closers.push(() => digests.close());
    const cutAt = (await digests.getJobs(['completed'])).map((job) => Date.parse((job.data as { digest?: { takenAt?: string } }).digest?.takenAt ?? '')).sort((a, b) => a - b);
    expect(cutAt).toHaveLength(smtp.messages.length);
    for (let i = 1; i < cutAt.length; i += 1) expect((cutAt[i] ?? NaN) - (cutAt[i - 1] ?? NaN)).toBeGreaterThanOrEqual(3_000);
    // One digest for the whole storm when it was over before the window was; a
    // machine slow enough to stretch it past that puts the rest in the next.
    if (stormOverAt < (cutAt[1] ?? NaN)) expect(smtp.messages).toHaveLength(2);
    const messages = smtp.messages.map((raw) => ({ raw, text: mimePart(raw, 'text/plain') ?? '', html: mimePart(raw, 'text/html') ?? '' }));
    expect(mailed()).toBe(50);
    expect(totalOf(messages[0]!.raw)).toBeGreaterThanOrEqual(6);
    const seen: Record<string, number> = {};
    for (const message of messages) {
      expect(message.html).toContain('<table');
      expect(message.text).toContain('pnpm crawlq dlq list');
      expect(message.text).toContain(`namespace "${namespace}"`);
      for (const [group, count] of Object.entries(groupCounts(message.text))) seen[group] = (seen[group] ?? 0) + count;
    }
    expect(seen).toEqual(expected);
    const admin = createDeadLetterAdmin({ connection, namespace });
    closers.push(() => admin.close());
    expect(await admin.count()).toBe(50);
  });

  it('delays an alert while SMTP refuses connections, then delivers it exactly once', async () => {
    const port = await freePort();
    const namespace = `s${randomUUID().slice(0, 8)}`;
    const one = node(namespace, {
      mail: mail({ smtpUrl: `smtp://127.0.0.1:${port}`, firstDelayMs: 300 }),
      delivery: { attempts: 50, backoffMs: 100, maxBackoffMs: 300 },
    });
    one.alerts.startWorker();
    await Promise.all(['a.test', 'a.test', 'b.test'].map((group) => deadLetter(one, group)));
    await waitFor(() => one.logs.filter((line) => line.includes('will retry')).length >= 2, { what: 'two failed delivery attempts', timeoutMs: 15_000, intervalMs: 25 });
    expect(one.logs.join('\n')).toContain('ECONNREFUSED');

    const smtp = smtpServer(await startSmtp({ port }));
    await waitFor(() => smtp.messages.length >= 1, { what: 'the delayed e-mail', timeoutMs: 15_000, intervalMs: 25 });
    await sleep(1_000);
    expect(smtp.messages).toHaveLength(1);
    expect(totalOf(smtp.messages[0]!)).toBe(3);
    expect(groupCounts(mimePart(smtp.messages[0]!, 'text/plain') ?? '')).toEqual({ 'a.test': 2, 'b.test': 1 });
  });

  it('retries after 421 replies and sends the same digest once', async () => {
    const smtp = smtpServer(await startSmtp({ rejectFirst: 2 }));
    const namespace = `r${randomUUID().slice(0, 8)}`;
    const one = node(namespace, {
      mail: mail({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, firstDelayMs: 0 }),
      delivery: { attempts: 10, backoffMs: 50, maxBackoffMs: 200 },
    });
    one.alerts.startWorker();
    await deadLetter(one, 'x.test');
    await waitFor(() => smtp.messages.length >= 1, { what: 'the e-mail', timeoutMs: 15_000, intervalMs: 25 });
    await sleep(500);
    expect(smtp.mailFromCount()).toBe(3);
    expect(smtp.messages).toHaveLength(1);
    expect(totalOf(smtp.messages[0]!)).toBe(1);
    expect(one.logs.some((line) => line.includes('421'))).toBe(true);
  });

  it('writes an .eml with text and HTML parts to the outbox when there is no SMTP URL', async () => {
    const config = mail({ dashboardUrl: 'https://admin:secret@dash.test/dlq' });
    const namespace = `o${randomUUID().slice(0, 8)}`;
    const one = node(namespace, { mail: config });
    one.alerts.startWorker();
    await deadLetter(one, 'x<b>.test', 'https://bob:hunter2@x.test/a?session=abc');
    const file = await waitFor(() => (existsSync(config.outboxDir) ? readdirSync(config.outboxDir).find((name) => name.endsWith('.eml')) : undefined), { what: 'the .eml file', timeoutMs: 15_000, intervalMs: 25 });
    const raw = readFileSync(join(config.outboxDir, file), 'utf8');
    expect(mailHeader(raw, 'subject')).toBe(`[crawlq] 1 page dead-lettered (namespace ${namespace})`);
    expect(mailHeader(raw, 'to')).toBe('ops@example.test');
    const text = mimePart(raw, 'text/plain');
    const html = mimePart(raw, 'text/html');
    expect(text).toContain('https://x.test/a?session=***');
    expect(html).toContain('<table');
    expect(html).toContain('<td>x&lt;b&gt;.test</td>');
    expect(html).not.toContain('x<b>');
    for (const secret of ['hunter2', 'bob:', 'session=abc', 'secret']) expect(raw).not.toContain(secret);
    await waitFor(() => one.logs.some((line) => line.includes(file)), { what: 'the log line', timeoutMs: 15_000, intervalMs: 25 });
  });
});

describe('digest jobs', () => {
  it('a digest re-run after a crash sends the events it took, once, and later events separately', async () => {
    const smtp = smtpServer(await startSmtp());
    const namespace = `c${randomUUID().slice(0, 8)}`;
    const one = node(namespace, { mail: mail({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, firstDelayMs: 600_000, windowMs: 600_000 }) });
    await Promise.all(['a.test', 'a.test', 'b.test'].map((group) => deadLetter(one, group)));
    // A worker took digest-1's events and died before storing them in the job.
    const keys = alertKeys(namespace);
    const client = redis.client();
    const taken = await takeDigest.run(client, [keys.pending, keys.pendingExamples, keys.state, keys.taken('digest-1'), keys.takenExamples('digest-1'), keys.flush], [1, 600_000]);
    expect(taken.outcome).toBe('taken');
    await Promise.all(['c.test', 'c.test'].map((group) => deadLetter(one, group)));

    const result = await one.alerts.flush();
    // Seen once under load as { sent: false, pendingInRedis: false }: the logs and the queue's jobs say which path that was.
    const digests = openQueue(QUEUE_NAMES.alerts, { connection, namespace });
    closers.push(() => digests.close());
    const jobs = await digests.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active']);
    expect(result, `${one.logs.join('\n')}\n${JSON.stringify(jobs.map((job) => ({ id: job.id, returnvalue: job.returnvalue, data: job.data })))}`).toMatchObject({ sent: true, pendingInRedis: false });
    expect(smtp.messages.map(totalOf).sort()).toEqual([2, 3]);
    const byDigest = Object.fromEntries(smtp.messages.map((raw) => [mailHeader(raw, 'x-crawlq-digest'), groupCounts(mimePart(raw, 'text/plain') ?? '')]));
    expect(byDigest).toEqual({ 'digest-1': { 'a.test': 2, 'b.test': 1 }, 'digest-2': { 'c.test': 2 } });
    expect(await client.exists(keys.pending, keys.taken('digest-1'), keys.taken('digest-2'))).toBe(0);
  });

  it('a digest that comes due inside another digest window waits for the window to end', async () => {
    const smtp = smtpServer(await startSmtp());
    const namespace = `w${randomUUID().slice(0, 8)}`;
    const windowMs = 1_500;
    const one = node(namespace, { mail: mail({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, firstDelayMs: 100, windowMs }) });
    await deadLetter(one, 'a.test');
    // Another process sent a digest just now (after this digest job was scheduled).
    const sentElsewhere = Date.now();
    await redis.client().hset(alertKeys(namespace).state, 'lastDigestAt', String(sentElsewhere));
    one.alerts.startWorker();
    await waitFor(() => smtp.messages.length >= 1, { what: 'the e-mail', timeoutMs: 15_000, intervalMs: 25 });
    expect(Date.now() - sentElsewhere).toBeGreaterThanOrEqual(windowMs - 50);
    expect(smtp.messages).toHaveLength(1);
    expect(one.logs.some((line) => line.includes('will retry'))).toBe(false); // Deferred, not a failed attempt.
  });
});

describe('flush', () => {
  it('sends the pending digest now, without an alert worker running', async () => {
    const config = mail({ firstDelayMs: 600_000, windowMs: 600_000 });
    const namespace = `f${randomUUID().slice(0, 8)}`;
    const one = node(namespace, { mail: config });
    await deadLetter(one, 'a.test');
    await deadLetter(one, 'b.test');

    const result = await one.alerts.flush();
    expect(result.sent).toBe(true);
    expect(result.pendingInRedis).toBe(false);
    expect(result.outboxFile).toBeDefined();
    expect(readFileSync(result.outboxFile!, 'utf8')).toContain('[crawlq] 2 pages dead-lettered');
    expect(await one.alerts.flush()).toEqual({ sent: false, pendingInRedis: false });
  });

  it('reports a digest it cannot send as pending in Redis; the next worker sends it once', async () => {
    const port = await freePort();
    const namespace = `p${randomUUID().slice(0, 8)}`;
    const settings = { mail: mail({ smtpUrl: `smtp://127.0.0.1:${port}`, firstDelayMs: 600_000 }), delivery: { backoffMs: 200, maxBackoffMs: 200 } };
    const one = node(namespace, settings);
    await deadLetter(one, 'a.test');
    const result = await one.alerts.flush();
    expect(result).toMatchObject({ sent: false, pendingInRedis: true });
    expect(result.error).toContain('ECONNREFUSED');

    const smtp = smtpServer(await startSmtp({ port }));
    node(namespace, settings).alerts.startWorker();
    await waitFor(() => smtp.messages.length >= 1, { what: 'the e-mail', timeoutMs: 15_000, intervalMs: 25 });
    await sleep(500);
    expect(smtp.messages).toHaveLength(1);
    expect(totalOf(smtp.messages[0]!)).toBe(1);
  });
});
