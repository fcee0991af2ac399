import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { definedLuaScripts } from '@crawlq/redis';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.js';

const run = promisify(execFile);

/**
 * The Lua the packages run inside Redis, each script as Redis gets it
 * (includes first, then the body), checked by luacheck (Debian's lua-check,
 * which `npm run setup` installs) with the repository's .luacheckrc. A
 * function of a shared include that one script does not call is not a finding
 * there: another script calls it (the include's own unused locals still are).
 * BullMQ's own script, run inside the job writer, is left to BullMQ.
 */
async function loadEveryScript(): Promise<readonly { readonly name: string; readonly source: string }[]> {
  // Each package defines its scripts as it loads.
  await Promise.all([import('@crawlq/crawler'), import('@crawlq/dead-letter'), import('@crawlq/alerts'), import('@crawlq/group-limiter'), import('@crawlq/frontier'), import('@crawlq/queue'), import('@crawlq/robots')]);
  return definedLuaScripts();
}

/** Names of the functions shared includes define (`local function name`), in any script. */
function includeFunctions(sources: readonly string[]): string[] {
  const names = new Set<string>();
  for (const source of sources) {
    const includes = source.slice(0, source.lastIndexOf('\n-- script: '));
    for (const match of includes.matchAll(/^local function ([A-Za-z_][A-Za-z0-9_]*)/gm)) names.add(match[1]!);
  }
  return [...names].sort();
}

describe('the Lua scripts', () => {
  it('are luacheck-clean, every one of them as Redis runs it', { timeout: 60_000 }, async () => {
    const scripts = await loadEveryScript();
    // Every package that runs Lua: the limiter, the frontier and its revisit schedule, the job lock, alerts, robots.txt fetch locks, the crawl definition.
    const names = scripts.map((script) => script.name);
    for (const expected of ['acquire', 'release', 'frontier-release', 'seen-claim', 'revisit-pop', 'queue-hold-job-lock', 'take-digest', 'write-definition', 'robots-release-lock']) expect(names).toContain(expected);
    expect(new Set(names).size).toBe(names.length);

    const dir = mkdtempSync(join(tmpdir(), 'crawlq-lua-'));
    const files = scripts.map((script) => {
      const file = join(dir, `${script.name}.lua`);
      writeFileSync(file, script.source);
      return file;
    });
    const ignores = includeFunctions(scripts.map((script) => script.source)).flatMap((name) => ['--ignore', `211/${name}`]);
    const result = await run('luacheck', ['--no-color', '--codes', '--config', join(REPO_ROOT, '.luacheckrc'), ...ignores, '--', ...files]).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: number | string; stdout?: string; stderr?: string }) => ({ code: error.code, stdout: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`Total: 0 warnings / 0 errors in ${files.length} files`));
  });
});
