import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPTION_TABLE, optionValueKind, type OptionName } from '@crawlq/config';
import { freePort, generatedPasswords, PRINTABLE_ASCII, PRINTABLE_SPECIALS, seededRandom, shuffled, startTestPostgres, startTestRedis, type TestPostgres, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, type CliResult } from '../support/cli.js';
import { readRecords } from '../support/records.js';

// A password given to crawlq, or handed to it by a site's redirect, never
// reaches any output: stderr, stdout, the results file. Whatever the spelling:
// a password with `/`, `#`, `@` or a space not percent-encoded, a mistyped scheme.
const SECRET = 'S3cr3tPw';
let redis: TestRedis;
let postgres: TestPostgres;
let closedPort: number;
let server: Server;
let base: string;

beforeAll(async () => {
  [redis, postgres, closedPort] = await Promise.all([startTestRedis(), startTestPostgres(), freePort()]);
  server = createServer((request, response) => {
    const host = `127.0.0.2:${(server.address() as { port: number }).port}`;
    const html = (body: string) => response.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>t</title></head><body>${body}</body></html>`);
    if (request.url === '/') return html('<a href="/login">login</a> <a href="/again">again</a>');
    // Redirects whose Location carries user:password, first to a new page, then to a seen one.
    if (request.url === '/login' || request.url === '/again') return response.writeHead(302, { location: `http://admin:${SECRET}@${host}/inside` }).end();
    if (request.url === '/inside') return html('inside');
    return response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  base = `http://127.0.0.2:${(server.address() as { port: number }).port}/`;
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await Promise.all([redis.stop(), postgres.stop()]);
});

/** Every run of six characters of `secret`: a leak of a part of it is a leak too. */
function leakedPart(shown: string, secret: string): string | undefined {
  for (let index = 0; index + 6 <= secret.length; index++) {
    const window = secret.slice(index, index + 6);
    if (shown.includes(window)) return window;
  }
  return undefined;
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** How each URL option is tried: a command that reads it, the URL for a password in each spelling, and what a valid URL leads to. */
interface Target {
  readonly scheme: string;
  readonly url: (password: string, spelling: number) => string;
  /** The command line, given the option (flag) or not (the variable carries the value). */
  readonly args: (flag?: { name: string; value: string }) => string[];
  /** A value without the scheme is a file path (`--out`): taken as it is. */
  readonly orFilePath?: true;
  /** Exit code and one-line stderr when the URL is valid and means what was written; for the flag (true) or the variable. */
  readonly valid: (viaFlag: boolean) => { code: number; line: RegExp };
}

/** A command that accepts any option and then stops before connecting: a lease shorter than a request is refused once all options are read. */
const workerStopped = (flag?: { name: string; value: string }) => ['worker', '--namespace', 'secrets', '--lease-time', '1s', ...(flag ? [flag.name, flag.value] : [])];
const statusOf = (flag?: { name: string; value: string }) => ['status', '--namespace', 'secrets', ...(flag ? [flag.name, flag.value] : [])];
const LEASE_REFUSED = { code: 2, line: /^crawlq: --lease-time: 1s is shorter than --request-timeout 30s/ };
const STATUS_OK = { code: 0, line: /^$/ };

/** Well-typed, without a user, and with the scheme's colon forgotten: the spellings an operator makes. */
function spelled(scheme: string, user: string, password: string, rest: string, spelling: number): string {
  if (spelling % 3 === 0) return `${scheme}://${user}:${password}@${rest}`;
  if (spelling % 3 === 1) return `${scheme}://:${password}@${rest}`;
  return `${scheme}//${user}:${password}@${rest}`;
}

function targets(): Record<string, Target> {
  return {
    redisUrl: {
      scheme: 'redis',
      url: (pw, spelling) => spelled('redis', 'default', pw, `127.0.0.1:${closedPort}`, spelling),
      args: statusOf,
      valid: () => ({ code: 1, line: new RegExp(`^crawlq: cannot reach Redis at redis://(default)?:\\*\\*\\*@127\\.0\\.0\\.1:${closedPort}`) }),
    },
    databaseUrl: {
      scheme: 'postgres',
      url: (pw, spelling) => spelled('postgres', 'crawlq', pw, `127.0.0.1:${postgres.port}/postgres`, spelling),
      args: (flag) => ['results', 'stats', ...(flag ? [flag.name, flag.value] : [])],
      // A real server that refuses the (generated, wrong) password: a configuration error.
      valid: () => ({ code: 2, line: /^crawlq: --database-url: PostgreSQL at postgres:\/\/(crawlq)?:\*\*\*@127\.0\.0\.1:\d+\/postgres refused the connection/ }),
    },
    smtpUrl: {
      scheme: 'smtp',
      url: (pw, spelling) => spelled('smtp', 'alerts', pw, `127.0.0.1:${closedPort}`, spelling),
      args: (flag) => (flag ? workerStopped(flag) : statusOf()),
      valid: (viaFlag) => (viaFlag ? LEASE_REFUSED : STATUS_OK),
    },
    dashboardUrl: {
      scheme: 'https',
      url: (pw, spelling) => spelled('https', 'ops', pw, 'dash.example.test/crawlq', spelling),
      args: (flag) => (flag ? workerStopped(flag) : statusOf()),
      valid: (viaFlag) => (viaFlag ? LEASE_REFUSED : STATUS_OK),
    },
    out: {
      scheme: 'postgres',
      orFilePath: true,
      url: (pw, spelling) => spelled('postgres', 'crawlq', pw, `127.0.0.1:${postgres.port}/postgres`, spelling),
      args: (flag) => (flag ? workerStopped(flag) : statusOf()),
      valid: (viaFlag) => (viaFlag ? LEASE_REFUSED : STATUS_OK),
    },
  };
}

/**
 * What the URL means to a URL parser: `refused` when it does not parse as the
 * scheme's URL (crawlq must refuse it naming the option), `valid` when it
 * parses to the host and password written (or is a file path where one is
 * taken), `other` when it parses to something else (a `user:12/x@...` reads
 * as a host and port).
 */
function meaning(url: string, target: Target, password: string): 'refused' | 'valid' | 'other' {
  if (target.orFilePath && !url.startsWith(`${target.scheme}:`)) return 'valid';
  if (!url.startsWith(`${target.scheme}://`) || !URL.canParse(url)) return 'refused';
  const parsed = new URL(url);
  let decoded: string | undefined;
  try {
    decoded = decodeURIComponent(parsed.password);
  } catch {
    decoded = undefined;
  }
  return /^(127\.0\.0\.1|dash\.example\.test)$/.test(parsed.hostname) && decoded === password ? 'valid' : 'other';
}

/**
 * The generated passwords: one holding every printable character, then the 32
 * characters that are neither letters nor digits spread four to a password,
 * so each is tried where no other special character comes before it.
 */
const ALPHANUMERIC = PRINTABLE_ASCII.replace(/[^A-Za-z0-9]/g, '');

function passwordsFor(seed: number): string[] {
  const random = seededRandom(seed);
  const specials = shuffled(PRINTABLE_SPECIALS, random);
  const groups = Array.from({ length: Math.ceil(specials.length / 4) }, (_, index) => specials.slice(index * 4, index * 4 + 4));
  return [
    `a1${shuffled(PRINTABLE_ASCII, random)}`,
    ...groups.map((including, index) => generatedPasswords({ seed: seed * 100 + index, count: 1, including, from: ALPHANUMERIC })[0] ?? ''),
  ];
}

interface Case {
  readonly option: OptionName;
  readonly via: string;
  readonly password: string;
  readonly url: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly expected: 'refused' | 'valid' | 'other';
  readonly label: string;
  readonly valid: { code: number; line: RegExp };
}

function cases(): Case[] {
  const all: Case[] = [];
  const byOption = targets();
  let seed = 1;
  for (const option of Object.keys(OPTION_TABLE) as OptionName[]) {
    if (optionValueKind(option) !== 'url') continue;
    const target = byOption[option];
    if (target === undefined) throw new Error(`no way to try the URL option ${option}: add it to targets()`);
    const { flag, env } = OPTION_TABLE[option];
    for (const via of [flag, env]) {
      if (via === undefined) continue;
      const viaFlag = via.startsWith('--');
      passwordsFor(seed++).forEach((password, spelling) => {
        const url = target.url(password, spelling);
        all.push({
          option,
          via,
          password,
          url,
          args: target.args(viaFlag ? { name: via, value: url } : undefined),
          env: viaFlag ? {} : { [via]: url },
          expected: meaning(url, target, password),
          label: via,
          valid: target.valid(viaFlag),
        });
      });
    }
  }
  return all;
}

/** Runs `body` over `items`, `width` at a time: a few CLI processes at once, not a hundred. */
async function inTurn<T, R>(items: readonly T[], width: number, body: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await body(items[index] as T);
      }
    }),
  );
  return results;
}

describe('secrets never reach output', () => {
  it.each([
    { name: 'REDIS_URL', env: { REDIS_URL: `redis://:${SECRET}@127.0.0.1:99999` }, shown: 'redis://:***@127.0.0.1:99999' },
    { name: 'SMTP_URL', env: { SMTP_URL: `smtp://alerts:${SECRET}@127.0.0.1:99999` }, shown: 'smtp://alerts:***@127.0.0.1:99999' },
  ])('an invalid $name is refused without echoing its password', async ({ env, shown }) => {
    const result = await runCli(['status'], { env: cliEnv(undefined, env) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(shown);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 240_000);

  it('generated passwords over every printable character, in every URL option and its variable, never show', async () => {
    const all = cases();
    // Every URL-valued option is tried through its flag and its variable, with every printable character.
    expect(new Set(all.map((one) => one.option))).toEqual(new Set(['redisUrl', 'databaseUrl', 'smtpUrl', 'dashboardUrl', 'out']));
    for (const via of new Set(all.map((one) => one.via))) {
      const tried = all.filter((one) => one.via === via).map((one) => one.password).join('');
      expect([...PRINTABLE_ASCII].filter((char) => !tried.includes(char)), via).toEqual([]);
    }
    const results = await inTurn(all, 4, (one) => runCli(one.args, { env: cliEnv(redis.url, one.env), timeoutMs: 120_000 }));
    const problems: string[] = [];
    all.forEach((one, index) => {
      const result = results[index] as CliResult;
      const said = `${one.via}=${JSON.stringify(one.url)} (${one.expected}): exit ${result.code}, stderr ${JSON.stringify(result.stderr)}`;
      const leak = leakedPart(result.stdout + result.stderr, one.password);
      if (leak !== undefined) problems.push(`leaked ${JSON.stringify(leak)}: ${said}`);
      const errors = lines(result.stderr);
      if (one.expected === 'refused') {
        // Refused as input: exit 2, one line naming the option the way it was given.
        if (result.code !== 2 || errors.length !== 1 || !errors[0]?.startsWith(`crawlq: ${one.label}: expected `)) problems.push(`not refused in one line: ${said}`);
      } else if (one.expected === 'valid') {
        if (result.code !== one.valid.code || errors.length > 1 || !one.valid.line.test(errors[0] ?? '')) problems.push(`not the valid URL's outcome: ${said}`);
      } else if (result.code === 0 ? errors.length > 0 : !errors.at(-1)?.startsWith('crawlq: ')) {
        // A URL that parses to another host: whatever happens, it ends in one `crawlq:` line, or succeeds silently.
        problems.push(`no closing error line: ${said}`);
      }
    });
    expect(problems).toEqual([]);
    // Each outcome was met, or the cases would not try what they claim.
    expect(new Set(all.map((one) => one.expected))).toEqual(new Set(['refused', 'valid', 'other']));
    process.stdout.write(`secrets: ${all.length} CLI runs, ${all.filter((one) => one.expected === 'refused').length} refused, ${all.filter((one) => one.expected === 'valid').length} valid, ${all.filter((one) => one.expected === 'other').length} read otherwise\n`);
  }, 600_000);

  it('a redirect Location with user:password leaves no credentials in records or logs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-secrets-'));
    const out = join(dir, 'results.jsonl');
    const result = await runCli(
      ['crawl', base, '--out', out, '--namespace', 'secrets', '--allow-private-network', '--rate', 'none', '--concurrency', '1', '--state-dir', dir],
      { env: cliEnv(redis.url), timeoutMs: 200_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const records = readRecords(out);
    // The redirect was followed (the page exists in the results), yet no output holds the secret.
    expect(records.some((record) => record.finalUrl?.endsWith('/inside'))).toBe(true);
    expect(readFileSync(out, 'utf8')).not.toContain(SECRET);
    expect(readFileSync(out, 'utf8')).not.toContain('admin@');
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 240_000);
});
