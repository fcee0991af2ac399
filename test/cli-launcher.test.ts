import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAMP } from '../apps/cli/build-freshness.mjs';
import { REPO_ROOT } from './support/cli.js';

// `pnpm crawlq` runs apps/cli/launcher.mjs: the built CLI when no
// source it loads changed after the last `pnpm build` started, the sources
// through tsx otherwise, so an edit since that build never runs stale JavaScript. Checked on a small copy of the
// workspace's layout whose "built" and "source" entries say which one ran.
function workspace(): { root: string; run: (args?: string[]) => { code: number | null; stdout: string; stderr: string } } {
  const root = mkdtempSync(join(tmpdir(), 'crawlq-launcher-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('apps/cli/package.json', JSON.stringify({ name: '@crawlq/cli', dependencies: { '@crawlq/a': 'workspace:*', commander: '1' } }));
  write('packages/a/package.json', JSON.stringify({ name: '@crawlq/a', dependencies: { '@crawlq/b': 'workspace:*' } }));
  write('packages/b/package.json', JSON.stringify({ name: '@crawlq/b' }));
  write('packages/unused/package.json', JSON.stringify({ name: '@crawlq/unused' }));
  write('apps/cli/src/main.ts', "const code: number = Number(process.argv[2] ?? 0);\nconsole.log(`source ${process.argv[1]}`);\nprocess.exit(code);\n");
  write('packages/a/src/index.ts', 'export {};\n');
  write('packages/b/src/deep/util.ts', 'export {};\n');
  write('packages/unused/src/index.ts', 'export {};\n');
  write('apps/cli/dist/main.js', 'console.log(`built ${process.argv[1]}`);\nprocess.exit(Number(process.argv[2] ?? 0));\n');
  write('packages/a/dist/index.js', 'export {};\n');
  write('packages/b/dist/index.js', 'export {};\n');
  // What `pnpm build` (build-stamp.mjs) leaves: when the last complete build started, after the sources were written.
  write('apps/cli/.build-started', `${Date.now() + 60_000}\n`);
  for (const file of ['launcher.mjs', 'build-freshness.mjs']) copyFileSync(join(REPO_ROOT, 'apps/cli', file), join(root, 'apps/cli', file));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules')); // tsx
  return {
    root,
    run: (args = []) => {
      const result = spawnSync(process.execPath, [join(root, 'apps/cli/launcher.mjs'), ...args], { encoding: 'utf8', timeout: 120_000 });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    },
  };
}

describe('pnpm crawlq (apps/cli/launcher.mjs)', () => {
  it('runs the build when it is newer than every source the CLI loads, and passes the exit code on', () => {
    const { root, run } = workspace();
    const result = run(['3']);
    expect(result.code).toBe(3);
    // Workers `crawl` spawns re-run process.argv[1]: the built entry itself.
    expect(result.stdout.trim()).toBe(`built ${join(root, 'apps/cli/dist/main.js')}`);
    // A package the CLI does not load may be stale.
    const now = new Date(Date.now() + 120_000);
    utimesSync(join(root, 'packages/unused/src/index.ts'), now, now);
    expect(run().stdout).toMatch(/^built /);
  });

  it('runs `worker` from the bundled worker when the build has one, every other command from the built CLI', () => {
    const { root, run } = workspace();
    expect(run(['worker', '--namespace', 'a']).stdout).toMatch(/^built /);
    const bundle = join(root, 'apps/cli/dist/crawlq-worker.js');
    writeFileSync(bundle, 'console.log(`bundle ${process.argv[1]} ${process.argv.slice(2).join(" ")}`);\n');
    expect(run(['worker', '--namespace', 'a']).stdout.trim()).toBe(`bundle ${bundle} worker --namespace a`);
    expect(run(['--help', 'worker']).stdout.trim()).toBe(`bundle ${bundle} --help worker`);
    expect(run(['5']).stdout.trim()).toBe(`built ${join(root, 'apps/cli/dist/main.js')}`);
  });

  it.each([
    ['a source of the CLI', 'apps/cli/src/main.ts'],
    ['a source of a package it loads, however deep', 'packages/b/src/deep/util.ts'],
    ["a package's manifest", 'packages/a/package.json'],
  ])('runs the sources through tsx once %s changed after the build', { timeout: 150_000 }, (_what, path) => {
    const { root, run } = workspace();
    const now = new Date(Date.now() + 120_000);
    utimesSync(join(root, path), now, now);
    const result = run(['4']);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stdout.trim()).toBe(`source ${join(root, 'apps/cli/src/main.ts')}`);
  });

  it('runs the sources when a package was never built, or no build completed', { timeout: 150_000 }, () => {
    const first = workspace();
    rmSync(join(first.root, 'packages/b/dist'), { recursive: true });
    expect(first.run().stdout).toMatch(/^source /);
    const second = workspace();
    rmSync(join(second.root, 'apps/cli/.build-started'));
    expect(second.run().stdout).toMatch(/^source /);
  });
});

describe('pnpm build (apps/cli/build-stamp.mjs)', () => {
  it('dates the build by its start, and only once the build succeeded', () => {
    const root = mkdtempSync(join(tmpdir(), 'crawlq-stamp-'));
    mkdirSync(join(root, 'apps/cli'), { recursive: true });
    for (const file of ['build-stamp.mjs', 'build-freshness.mjs']) copyFileSync(join(REPO_ROOT, 'apps/cli', file), join(root, 'apps/cli', file));
    const stamp = join(root, 'apps/cli/.build-started');
    const build = (command: string) => spawnSync(process.execPath, [join(root, 'apps/cli/build-stamp.mjs'), process.execPath, '-e', command], { encoding: 'utf8' });
    expect(build('process.exit(4)').status).toBe(4);
    expect(existsSync(stamp)).toBe(false);
    const before = Date.now();
    expect(build('setTimeout(() => {}, 300)').status).toBe(0);
    const started = Number(readFileSync(stamp, 'utf8'));
    expect(started).toBeGreaterThanOrEqual(before);
    // The start, not the end: a source saved while the build ran counts as newer.
    expect(started).toBeLessThan(statSync(stamp).mtimeMs);
  });

  it("keeps the stamp out of the build's cached outputs: a cache hit would bring an older build's moment back", () => {
    const turbo = JSON.parse(readFileSync(join(REPO_ROOT, 'turbo.json'), 'utf8')) as { tasks: { build: { outputs: string[] } } };
    const fromCli = relative(join(REPO_ROOT, 'apps/cli'), STAMP).split('\\').join('/');
    expect(fromCli.startsWith('..')).toBe(false);
    // Each output glob as its directory (turbo's globs here are `dir/**`): the stamp is under none of them.
    for (const glob of turbo.tasks.build.outputs) expect(fromCli.startsWith(glob.replace(/\*\*$/, ''))).toBe(false);
  });
});
