import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, OPTION_TABLE, type OptionName } from '@crawlq/config';
import { describe, expect, it } from 'vitest';
import { cliEnv, REPO_ROOT, runCli } from './support/cli.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
/** The chapter that holds the generated option table (the block between the `options` markers). */
const configuration = readFileSync(join(REPO_ROOT, 'docs/03-configuration.md'), 'utf8');

/** The first fenced code block under "## Quick start", one command per line. */
function quickStartCommands(): string[] {
  const section = readme.split(/^## Quick start$/m)[1] ?? '';
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
}

describe('README', () => {
  it('documents every option exactly as `crawlq options` prints it (in docs/03-configuration.md)', async () => {
    const printed = await runCli(['options'], { env: cliEnv(undefined) });
    expect(printed.code).toBe(0);
    const documented = /<!-- options:start -->\n([\s\S]*?)\n<!-- options:end -->/.exec(configuration)?.[1];
    expect(documented).toBe(printed.stdout.trim());
  });

  it('prints each default so that, given back to its option, it means the default', async () => {
    const printed = await runCli(['options'], { env: cliEnv(undefined) });
    const rows = printed.stdout.split('\n').filter((line) => line.startsWith('| `--'));
    const checked: string[] = [];
    for (const row of rows) {
      const [, , key, shown] = row.split(' | ');
      const name = key?.replace(/`/g, '') as OptionName;
      const option = OPTION_TABLE[name];
      if (option?.env === undefined || shown === undefined || ['unset', 'none', 'unlimited'].includes(shown)) continue;
      const config = loadConfig({ env: { [option.env]: shown.replace(/^`|`$/g, '') } }) as unknown as Record<string, unknown>;
      expect(config[name], `${option.flag ?? name} printed as ${shown}`).toEqual(option.default);
      checked.push(name);
    }
    // Durations, sizes, ratios and plain numbers are among them (a ratio once printed as "0.05ms").
    expect(checked).toEqual(expect.arrayContaining(['requestTimeout', 'maxBodySize', 'spacingMargin', 'robotsTtl', 'concurrency']));
  });

  it('has a two-command quick start whose second command is what CI runs', () => {
    const commands = quickStartCommands();
    expect(commands).toHaveLength(2);
    expect(commands[1]).toBe('pnpm test');
    // CI may pipe the command's output (to sum up failures at the end), but the
    // command itself must be the README's, as a line of its own.
    expect(readFileSync(join(REPO_ROOT, '.ci/run'), 'utf8')).toMatch(/^pnpm test(?:$| 2>&1 \| )/m);
  });

  it('runs its first quick-start command from a fresh clone', { timeout: 600_000 }, async () => {
    const clone = join(mkdtempSync(join(tmpdir(), 'crawlq-clone-')), 'crawlq');
    execFileSync('git', ['clone', '--quiet', REPO_ROOT, clone]);
    const [first] = quickStartCommands();
    // The clone's build replays this checkout's turbo cache (same sources, same hashes): what
    // is checked here is the README's command from a clone, and CI itself builds from nothing.
    const env = { ...cliEnv(undefined), TURBO_CACHE_DIR: join(REPO_ROOT, '.turbo', 'cache') };
    const child = spawn('bash', ['-c', first ?? 'false'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    expect(output).toContain('crawl finished');
    expect(output).toMatch(/pages\s+\d{3} in/);
    // The private redis-server it started is gone again.
    expect(readFileSync(join(clone, '.crawlq/redis/redis.log'), 'utf8')).toMatch(/ready to exit|Redis is now ready to exit/i);
  });
});
