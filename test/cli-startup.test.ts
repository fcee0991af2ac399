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
