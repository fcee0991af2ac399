import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';

// `crawlq --help` lists commands from a table without loading them;
// each entry must say what the command itself says.
describe('the lazily loaded command list', () => {
  it('describes every command as the command does', { timeout: 300_000 }, async () => {
    const overview = await runCli(['--help'], { env: cliEnv(undefined) });
    expect(overview.code).toBe(0);
    const names = [...overview.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((match) => match[1] ?? '').filter((name) => name !== 'help');
    expect(names).toEqual(['crawl', 'enqueue', 'worker', 'status', 'demo', 'group', 'server', 'dlq', 'dashboard', 'results', 'options', 'config']);
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    for (const name of names) {
      const own = await runCli([name, '--help'], { env: cliEnv(undefined) });
      expect(own.code, own.stderr).toBe(0);
      // The description the module registers is the second paragraph of its help.
      const description = flat(own.stdout.split('\n\n')[1] ?? '');
      expect(flat(overview.stdout), name).toContain(description);
    }
  });
});

// Input a command refuses is answered before it loads what talks to Redis,
// PostgreSQL or the web: each command imports its runtime once its options
// are read. Seen through a module hook that writes down every module Node
// resolves: none of the runtime's packages, neither as a module of its own
// (crawlq run from its sources) nor inside a built chunk (the bundle names
// each package it inlines in a comment).
const RUNTIME_PACKAGES = ['bullmq', 'ioredis', 'pg', 'got', 'cheerio'];
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.CRAWLQ_TEST_MODULE_LOG, result.url + '\\n');
  return result;
}`;
const RECORD_MODULES = `data:text/javascript,${encodeURIComponent(`import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`)}`;

/** The runtime packages among the modules `crawlq <args>` loaded, with its exit code and stderr. */
async function runtimeLoadedBy(args: readonly string[]): Promise<{ code: number | null; stderr: string; runtime: string[]; modules: number }> {
  const log = join(mkdtempSync(join(tmpdir(), 'crawlq-modules-')), 'modules.txt');
  const result = await runCli(args, { env: cliEnv(undefined, { CRAWLQ_TEST_MODULE_LOG: log }), nodeFlags: ['--import', RECORD_MODULES] });
  const urls = existsSync(log) ? [...new Set(readFileSync(log, 'utf8').split('\n').filter((url) => url.startsWith('file:')))] : [];
  const runtime = new Set<string>();
  for (const url of urls) {
    // A built file is read once, for every package's marker.
    const built = url.includes('/dist/') ? readFileSync(fileURLToPath(url), 'utf8') : '';
    for (const name of RUNTIME_PACKAGES) {
      const own = new RegExp(`/node_modules/(?:\\.pnpm/[^/]+/node_modules/)?${name}/`).test(url);
      if (own || built.includes(`node_modules/.pnpm/${name}@`)) runtime.add(name);
    }
  }
  return { code: result.code, stderr: result.stderr, runtime: [...runtime].sort(), modules: urls.length };
}

describe('refused input', () => {
  it('is answered before a command loads BullMQ, ioredis, pg, got or cheerio', { timeout: 300_000 }, async () => {
    const refused: [string[], RegExp][] = [
      [['crawl', 'http://127.0.0.1/', '--rate', 'bogus'], /^crawlq: --rate: /],
      [['enqueue', 'http://127.0.0.1/', '--rate', 'bogus'], /^crawlq: --rate: /],
      [['demo', '--rate', 'bogus'], /^crawlq: --rate: /],
      [['status', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['group', 'list', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['group', 'pause', 'g', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['server', 'list', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['dlq', 'list', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['config', 'show', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['dashboard', '--redis-url', 'redis//x'], /^crawlq: --redis-url: /],
      [['results', 'stats', '--database-url', 'postgres//x'], /^crawlq: --database-url: /],
    ];
    for (const [args, line] of refused) {
      const seen = await runtimeLoadedBy(args);
      expect(seen.code, args.join(' ')).toBe(2);
      expect(seen.stderr, args.join(' ')).toMatch(line);
      expect(seen.runtime, args.join(' ')).toEqual([]);
      // The hook saw the modules crawlq did load: an empty list would pass for nothing.
      expect(seen.modules, args.join(' ')).toBeGreaterThan(0);
    }
    // The same check sees the runtime where it is loaded: a valid Redis URL (nothing listens there).
    const reaching = await runtimeLoadedBy(['status', '--redis-url', 'redis://127.0.0.1:1']);
    expect(reaching.code).not.toBe(0);
    expect(reaching.runtime).toEqual(expect.arrayContaining(['bullmq', 'ioredis']));
  });
});
