import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { definedLuaScripts, type LuaFile } from '@crawlq/redis';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.js';

const run = promisify(execFile);

/**
 * The Lua the packages run inside Redis, checked by luacheck (Debian's
 * lua-check, which `npm run setup` installs) with the repository's
 * .luacheckrc, twice: every `.lua` file as it is in the repository (what an
 * editor's Lua tools see), and every script as Redis gets it (includes
 * placed), which also catches what only the whole shows (a local an include
 * defines and a script defines again). A function of a shared include that
 * one script does not call is not a finding: another script calls it (the
 * include's own unused locals still are). BullMQ's own script, run inside the
 * job writer, is left to BullMQ.
 */
async function loadEveryScript(): Promise<ReturnType<typeof definedLuaScripts>> {
  // Each package defines its scripts as it loads.
  await Promise.all([import('@crawlq/crawl-control'), import('@crawlq/crawler'), import('@crawlq/dead-letter'), import('@crawlq/alerts'), import('@crawlq/group-limiter'), import('@crawlq/frontier'), import('@crawlq/queue'), import('@crawlq/robots')]);
  return definedLuaScripts();
}

/** The names a file defines for the files that include it: its top-level locals (`local function f`, `local A, B =`). */
function exportedNames(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/^local function ([A-Za-z_]\w*)|^local ([A-Za-z_][\w, ]*?)\s*=/gm)) {
    const found = match[1] ?? match[2] ?? '';
    names.push(...found.split(',').map((name) => name.trim()));
  }
  return names;
}

/** Every file these reach through their include lines, each once, includes first. */
function reachable(files: readonly LuaFile[]): LuaFile[] {
  const seen = new Map<string, LuaFile>();
  const visit = (file: LuaFile): void => {
    if (seen.has(file.id)) return;
    seen.set(file.id, file);
    file.includes.forEach(visit);
  };
  files.forEach(visit);
  return [...seen.values()];
}

/** What a file may read that its includes define (all of them, through the includes of includes). */
function includedNames(file: LuaFile): string[] {
  return [...new Set(reachable(file.includes).flatMap((included) => exportedNames(included.text)))].sort();
}

/** The `.lua` files under packages/<name>/src, as absolute paths. */
function luaFilesOnDisk(): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(REPO_ROOT, 'packages'))) {
    const src = join(REPO_ROOT, 'packages', name, 'src');
    let entries: string[];
    try {
      entries = readdirSync(src, { recursive: true, encoding: 'utf8' });
    } catch {
      continue;
    }
    found.push(...entries.filter((path) => path.endsWith('.lua')).map((path) => join(src, path)));
  }
  return found.sort();
}

async function luacheck(config: string, args: readonly string[], files: readonly string[]): Promise<{ code: number | string | undefined; stdout: string }> {
  return run('luacheck', ['--no-color', '--codes', '--config', config, ...args, '--', ...files]).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: number | string; stdout?: string; stderr?: string }) => ({ code: error.code, stdout: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
}

const lua = (value: string): string => JSON.stringify(value);

describe('the Lua scripts', () => {
  it('are luacheck-clean, every .lua file alone (its includes\' names known) and every script as Redis runs it', { timeout: 60_000 }, async () => {
    const scripts = await loadEveryScript();
    // Every package that runs Lua: the limiter, the frontier and its revisit schedule, the job lock, alerts, robots.txt fetch locks, the crawl definition and page counters.
    const names = scripts.map((script) => script.name);
    for (const expected of ['acquire', 'release', 'frontier-release', 'seen-claim', 'revisit-pop', 'queue-hold-job-lock', 'take-digest', 'write-definition', 'robots-release-lock', 'crawl-stats-add']) expect(names).toContain(expected);
    expect(new Set(names).size).toBe(names.length);

    // The files: every one on disk is used by a script, and read from where it lies.
    const used = reachable(scripts.flatMap((script) => (script.file === undefined ? [] : [script.file])));
    const onDisk = used.filter((file) => file.path !== undefined);
    expect(onDisk.map((file) => file.path).sort()).toEqual(luaFilesOnDisk());
    const rc = readFileSync(join(REPO_ROOT, '.luacheckrc'), 'utf8');
    const includes = new Set(used.flatMap((file) => file.includes.map((included) => included.id)));
    const perFile = onDisk.map((file) => {
      const known = includedNames(file).map(lua).join(', ');
      // An include defines names for others: not using them itself is its purpose.
      const own = includes.has(file.id) ? exportedNames(file.text).map((name) => lua(`211/${name}`)).join(', ') : '';
      return `files[${lua(file.path ?? '')}] = { read_globals = { ${known} }, ignore = { ${own} } }`;
    });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-lua-'));
    const fileConfig = join(dir, 'files.luacheckrc');
    writeFileSync(fileConfig, `${rc}\n${perFile.join('\n')}\n`);
    const alone = await luacheck(fileConfig, [], onDisk.map((file) => file.path ?? ''));
    expect(alone.code, alone.stdout).toBe(0);
    expect(alone.stdout).toMatch(new RegExp(`Total: 0 warnings / 0 errors in ${onDisk.length} files`));

    // The scripts as Redis runs them.
    const composed = scripts.map((script) => {
      const file = join(dir, `${script.name}.lua`);
      writeFileSync(file, script.source);
      return file;
    });
    const includeFunctions = new Set<string>();
    for (const script of scripts) {
      const parts = script.file === undefined ? [script.source.slice(0, script.source.lastIndexOf('\n-- script: '))] : reachable(script.file.includes).map((file) => file.text);
      for (const part of parts) for (const match of part.matchAll(/^local function ([A-Za-z_]\w*)/gm)) includeFunctions.add(match[1] ?? '');
    }
    const ignores = [...includeFunctions].sort().flatMap((name) => ['--ignore', `211/${name}`]);
    const whole = await luacheck(join(REPO_ROOT, '.luacheckrc'), ignores, composed);
    expect(whole.code, whole.stdout).toBe(0);
    expect(whole.stdout).toMatch(new RegExp(`Total: 0 warnings / 0 errors in ${composed.length} files`));
  });
});
