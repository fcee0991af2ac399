import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { freePort, mailHeader, mimePart, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';

const FAILING = '127.0.0.90';
const ALERT_TO = 'ops@example.test';

let redis: TestRedis;
let site: DemoSite;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: [FAILING], pagesPerHost: 60, linksPerPage: 1 });
  // Every page answers 503, a little late: no worker can take the whole backlog alone.
  site.setFaults([{ host: FAILING, status: 503, delayMs: 300 }]);
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await site.close();
  await redis.stop();
});

/** A message the SMTP server accepted. */
interface Received {
  readonly raw: string;
  readonly rcptTo: string[];
  readonly at: number;
}

/** A real SMTP server on loopback that keeps every message it accepts. */
async function startSmtp(port = 0): Promise<{ port: number; messages: Received[]; close(): Promise<void> }> {
  const messages: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({ raw: Buffer.concat(chunks).toString('utf8'), rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address), at: Date.now() });
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  closers.push(close);
  return { port: typeof address === 'object' && address ? address.port : 0, messages, close };
}

/** The rows of one table ("By group", "By reason") of a digest's text part. */
function table(text: string, title: string): Record<string, number> {
  const section = new RegExp(`${title} \\(\\d+\\):\\n((?: {2}.*\\n)+)`).exec(text)?.[1] ?? '';
  const rows: Record<string, number> = {};
  for (const line of section.split('\n')) {
    const match = /^ {2}(\S+)\s+(\d+)$/.exec(line);
    if (match?.[1] !== undefined) rows[match[1]] = Number(match[2]);
  }
  return rows;
}

/** What a digest e-mail says, read from its headers and text part. */
function digestOf(message: Received) {
  const text = mimePart(message.raw, 'text/plain');
  if (text === undefined) throw new Error(`no text/plain part in:\n${message.raw}`);
  return {
    text,
    subject: mailHeader(message.raw, 'subject') ?? '',
    to: mailHeader(message.raw, 'to') ?? '',
    total: Number(/^(\d+) pages? dead-lettered/.exec(text)?.[1] ?? Number.NaN),
    byGroup: table(text, 'By group'),
    byReason: table(text, 'By reason'),
    cutAt: Date.parse(/cut at (\S+)\./.exec(text)?.[1] ?? ''),
    digestId: mailHeader(message.raw, 'x-crawlq-digest'),
  };
}

function fleetFor(namespace: string, flags: string[]): Fleet {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-alerts-'));
  return new Fleet({ redisUrl: redis.url, dir, flags: ['--namespace', namespace, ...crawlFlags(), '--state-dir', join(dir, 'state'), ...flags] });
}

/** Shared by enqueue and the workers: one attempt, so each URL is one dead letter. */
function crawlFlags(): string[] {
  return ['--allow-private-network', '--attempts', '1', '--backoff', '100ms', '--max-depth', '0', '--rate', 'none', '--domain-concurrency', '8'];
}

const WORKER_FLAGS = ['--concurrency', '2', '--fetch-retries', '0', '--grace-period', '2s'];

async function enqueue(fleet: Fleet, namespace: string, urls: string[]): Promise<void> {
  const result = await runCli(['enqueue', '--file', '-', '--namespace', namespace, ...crawlFlags()], { env: fleet.env, input: urls.join('\n') });
  if (result.code !== 0 || !result.stdout.includes(`accepted ${urls.length}`)) throw new Error(`enqueue failed: ${result.stdout}${result.stderr}`);
}

function pageUrls(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, index) => site.urlOf(FAILING, from + index));
}

// Concurrent: most of each test is waiting for processes, delays and windows.
describe.concurrent('dead-letter alert e-mails end to end', () => {
  it('50 dead letters from 3 workers within one window: the first-failure e-mail plus one digest', { timeout: 120_000 }, async ({ expect }) => {
    const smtp = await startSmtp();
    const namespace = 'alerts-storm';
    const fleet = fleetFor(namespace, [...WORKER_FLAGS, '--smtp-url', `smtp://127.0.0.1:${smtp.port}`, '--alert-to', ALERT_TO, '--alert-delay', '1s', '--alert-window', '20s']);
    closers.push(() => fleet.stop());
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);

    // The first failure after a quiet period: its e-mail goes out after --alert-delay.
    await enqueue(fleet, namespace, pageUrls(0, 1));
    await waitFor(() => (smtp.messages.length >= 1 ? true : undefined), { timeoutMs: 60_000, what: 'the first-failure e-mail' });

    // The storm, inside the window that e-mail opened. (Copies of the first
    // e-mail from the other alert workers would show up in the count below.)
    await enqueue(fleet, namespace, pageUrls(1, 49));
    const deadLetters = createDeadLetterAdmin({ connection: { url: redis.url }, namespace });
    closers.push(() => deadLetters.close());
    await waitFor(async () => ((await deadLetters.count()) >= 50 ? true : undefined), { timeoutMs: 60_000, what: '50 dead letters' });
    await waitFor(() => (smtp.messages.length >= 2 ? true : undefined), { timeoutMs: 60_000, what: 'the digest' });
    await sleep(3_000);
    expect(smtp.messages).toHaveLength(2);

    // Every worker dead-lettered some of the pages and could have sent its own copy.
    const perWorker = fleet.logs.map((log) => (log.match(/dead-lettered http:/g) ?? []).length);
    expect(perWorker.reduce((sum, count) => sum + count, 0), fleet.logs.join('\n')).toBe(50);
    expect(perWorker.every((count) => count > 0), fleet.logs.join('\n')).toBe(true);

    const group = `${FAILING}:${site.port}`;
    const [first, second] = smtp.messages.map(digestOf);
    expect(first).toMatchObject({ total: 1, byGroup: { [group]: 1 }, byReason: { 'http-503': 1 }, digestId: 'digest-1' });
    expect(first!.subject).toBe(`[crawlq] 1 page dead-lettered (namespace ${namespace})`);
    expect(first!.text).toContain(pageUrls(0, 1)[0]);
    // Workers run from the sources here (a dev checkout) in a namespace that is not the default.
    expect(first!.text).toContain(`pnpm crawlq dlq list --namespace ${namespace}\n`);
    expect(second).toMatchObject({ total: 49, byGroup: { [group]: 49 }, byReason: { 'http-503': 49 }, digestId: 'digest-2' });
    expect(second!.subject).toBe(`[crawlq] 49 pages dead-lettered (namespace ${namespace})`);
    expect(first!.total + second!.total).toBe(50);
    // At most one e-mail per window: the digest was cut a full window after the first.
    expect(second!.cutAt - first!.cutAt).toBeGreaterThanOrEqual(20_000);
    for (const message of smtp.messages) {
      expect(message.rcptTo).toEqual([ALERT_TO]);
      expect(mailHeader(message.raw, 'to')).toBe(ALERT_TO);
    }
  });

  it('SMTP down for a while, then up: the alert arrives exactly once', { timeout: 120_000 }, async ({ expect }) => {
    const port = await freePort();
    const namespace = 'alerts-smtp-down';
    const fleet = fleetFor(namespace, [...WORKER_FLAGS, '--smtp-url', `smtp://127.0.0.1:${port}`, '--alert-to', ALERT_TO, '--alert-delay', '1s']);
    closers.push(() => fleet.stop());
    await Promise.all([fleet.start(), fleet.start()]);
    const url = pageUrls(50, 1)[0]!;
    await enqueue(fleet, namespace, [url]);
    // Nothing listens on the port: the digest job fails its first attempt and is kept for a retry.
    await waitFor(() => (fleet.logs.some((log) => /digest digest-1 not sent \(attempt 1\/\d+\), will retry/.test(log)) ? true : undefined), {
      timeoutMs: 60_000,
      what: 'a failed delivery',
    });
    await sleep(2_000);
    const smtp = await startSmtp(port);
    await waitFor(() => (smtp.messages.length >= 1 ? true : undefined), { timeoutMs: 60_000, what: 'the delayed alert' });
    await sleep(3_000);
    expect(smtp.messages).toHaveLength(1);
    const digest = digestOf(smtp.messages[0]!);
    expect(digest).toMatchObject({ total: 1, byGroup: { [`${FAILING}:${site.port}`]: 1 }, byReason: { 'http-503': 1 } });
    expect(digest.text).toContain(url);
    expect(smtp.messages[0]!.rcptTo).toEqual([ALERT_TO]);
  });

  it('a one-machine crawl with a dead letter and no SMTP writes an .eml to the outbox before exiting and says so', { timeout: 120_000 }, async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-outbox-'));
    const outbox = join(dir, 'outbox');
    const url = pageUrls(55, 1)[0]!;
    const result = await runCli(
      ['crawl', url, '--namespace', 'alerts-crawl', ...crawlFlags(), ...WORKER_FLAGS, '--out', join(dir, 'out.jsonl'), '--state-dir', join(dir, 'state'), '--outbox-dir', outbox],
      { env: cliEnv(redis.url) },
    );
    expect(result.code, result.stderr).toBe(0);
    const files = existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : [];
    expect(files).toHaveLength(1);
    const file = join(outbox, files[0]!);
    expect(result.stdout).toMatch(/dead-lettered\s+1\b/);
    // The crawl flushes a pending digest before it exits and says where it
    // went; a worker's alert worker may have sent it already (tiny delay here),
    // leaving nothing to flush. Either way exactly one e-mail exists by exit.
    const alertLine = /^\s+alerts\s+(.*)$/m.exec(result.stdout)?.[1];
    if (alertLine !== undefined) expect(alertLine).toBe(`alert written to ${file}`);
    const raw = readFileSync(file, 'utf8');
    const digest = digestOf({ raw, rcptTo: [], at: 0 });
    expect(digest.subject).toBe('[crawlq] 1 page dead-lettered (namespace alerts-crawl)');
    expect(digest).toMatchObject({ total: 1, byReason: { 'http-503': 1 } });
    expect(digest.text).toContain(url);
    expect(digest.text).toContain('pnpm crawlq dlq list --namespace alerts-crawl\n');
  });
});
