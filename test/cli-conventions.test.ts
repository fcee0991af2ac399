import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPTION_TABLE } from '@crawlq/config';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, REPO_ROOT, runCli } from './support/cli.js';

// CLI conventions: what a user of any command-line tool expects.
let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

describe('crawlq as a command-line tool', () => {
  it('--version and -V print the version; bare crawlq prints help and exits 0', { timeout: 180_000 }, async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/cli/package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag], { env: cliEnv(undefined) });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe(version);
    }
    const bare = await runCli([], { env: cliEnv(undefined) });
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stdout).toMatch(/^Usage: crawlq /);
    expect(bare.stdout).toContain('--version');
    // A mistake is still a usage error.
    expect((await runCli(['crawll'], { env: cliEnv(undefined) })).code).toBe(2);
    expect((await runCli(['status', '--nope'], { env: cliEnv(undefined) })).code).toBe(2);
  });

  it('--help groups options by section, in order, each with its default', { timeout: 120_000 }, async () => {
    const help = await runCli(['crawl', '--help'], { env: cliEnv(undefined) });
    expect(help.code, help.stderr).toBe(0);
    const headings = [...help.stdout.matchAll(/^([A-Z][a-z ]+):$/gm)].map((match) => match[1]);
    expect(headings).toEqual(['Arguments', 'Options', 'Redis', 'Crawl definition', 'Politeness', 'Fetching', 'Workers', 'Output', 'Alerts and dead letters', 'Logs and metrics']);
    const flat = help.stdout.replace(/\s+/g, ' ');
    expect(flat).toMatch(/--rate <value> Per-group request starts, .* \(default: 2\/1s\) \[env CRAWLQ_RATE\]/);
    expect(flat).toMatch(/--concurrency <value> Requests under way per worker process \(a job asleep until its next start holds none\) \(default: 16\)/);
    expect(flat).toMatch(/--max-body-size <value> .*\(default: 10 MiB\)/);
    // Each option under its own section.
    // The flag where it is defined, at the start of a line (descriptions may name it too).
    const section = (flag: string) => headings.findLast((heading) => help.stdout.indexOf(`${heading}:\n`) < help.stdout.search(new RegExp(`^  ${flag} `, 'm')));
    expect(section('--redis-url')).toBe('Redis');
    expect(section('--max-depth')).toBe('Crawl definition');
    expect(section('--domain-concurrency')).toBe('Politeness');
    expect(section('--request-timeout')).toBe('Fetching');
    expect(section('--out')).toBe('Output');
    expect(section('--alert-to')).toBe('Alerts and dead letters');
  });

  it('options --json lists every option with its section and default', { timeout: 120_000 }, async () => {
    const result = await runCli(['options', '--json'], { env: cliEnv(undefined) });
    expect(result.code, result.stderr).toBe(0);
    const options = JSON.parse(result.stdout) as { key: string; flag: string | null; section: string; default: unknown; defaultText: string }[];
    expect(options.map((option) => option.key)).toEqual(Object.keys(OPTION_TABLE));
    expect(options.find((option) => option.key === 'rate')).toMatchObject({ flag: '--rate', section: 'Politeness', default: { max: 2, durationMs: 1000 }, defaultText: '2/1s' });
    for (const option of options) expect(option.section, option.key).toMatch(/\w/);
  });

  it('a bad value is refused in the words of its option (exit 2, one line)', { timeout: 120_000 }, async () => {
    for (const [args, line] of [
      [['--rate', '5'], 'crawlq: --rate: expected MAX/DURATION such as 5/1s, or none (got "5")'],
      [['--scope', 'site'], 'crawlq: --scope: expected host, domain or any (got "site")'],
      [['--concurrency', '0'], 'crawlq: --concurrency: expected a whole number from 1 to 10000 (got "0")'],
    ] as const) {
      const result = await runCli(['crawl', 'http://127.0.0.1:9/', '--namespace', 'words', ...args], { env: cliEnv(redis.url) });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trim()).toBe(line);
    }
  });

  it('a crawl whose every seed was rejected is an error: exit 1', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-rejected-'));
    const args = ['--namespace', 'all-rejected', '--state-dir', dir, '--out', join(dir, 'out.jsonl'), '--log-format', 'pretty'];
    const result = await runCli(['crawl', 'ftp://example.test/', 'not a url', ...args, '--json'], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('every seed was rejected');
    const summary = JSON.parse(result.stdout) as { seeds: { accepted: number; rejected: { reason: string }[] } };
    expect(summary.seeds.accepted).toBe(0);
    expect(summary.seeds.rejected.map((rejected) => rejected.reason)).toEqual(['scheme', 'malformed']);
  });
});
