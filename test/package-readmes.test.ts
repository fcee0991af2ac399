import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every folder under packages/ has a README.md whose "What it may import"
// section names exactly the workspace packages its package.json lists in
// `dependencies`, and the floor docs/08-architecture.md gives it. A README
// that still names a dependency the package dropped, or misses one it added,
// tells the next reader the wrong boundary.

const root = resolve(import.meta.dirname, '..');
const HEADING = '## What it may import';

/** The text under `## What it may import`, up to the next heading of level 1 or 2; undefined when there is none. */
export function mayImportSection(markdown: string): string | undefined {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === HEADING);
  if (start === -1) return undefined;
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => /^#{1,2}\s/.test(line));
  return (end === -1 ? rest : rest.slice(0, end)).join('\n');
}

/** The workspace packages a text names (`@crawlq/crawler/fetching` names `@crawlq/crawler`). */
export function workspaceNames(text: string): Set<string> {
  return new Set([...text.matchAll(/@crawlq\/[a-z0-9-]+/g)].map((match) => match[0]));
}

/** Floor of each package, by folder name, from the table in docs/08-architecture.md (`| 3 | redis, sink |`). */
function floors(): Map<string, number> {
  const architecture = readFileSync(join(root, 'docs', '08-architecture.md'), 'utf8');
  const byName = new Map<string, number>();
  for (const match of architecture.matchAll(/^\|\s*(\d+)\s*\|([^|\n]+)\|\s*$/gm)) {
    for (const name of (match[2] ?? '').split(',')) byName.set(name.trim(), Number(match[1]));
  }
  return byName;
}

interface Manifest {
  name?: string;
  dependencies?: Record<string, string>;
}

/** What is wrong with the README of `packages/<folder>`; empty when nothing is. */
function readmeProblems(folder: string, floorOf: ReadonlyMap<string, number>): string[] {
  const dir = join(root, 'packages', folder);
  const where = `packages/${folder}/README.md`;
  const manifestFile = join(dir, 'package.json');
  const manifest = statSync(manifestFile, { throwIfNoEntry: false })?.isFile() === true ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest) : {};
  const readmeFile = join(dir, 'README.md');
  if (statSync(readmeFile, { throwIfNoEntry: false })?.isFile() !== true) return [`${where}: missing`];
  const section = mayImportSection(readFileSync(readmeFile, 'utf8'));
  if (section === undefined) return [`${where}: no "${HEADING}" heading`];

  const problems: string[] = [];
  const declared = Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith('@crawlq/'));
  const named = workspaceNames(section);
  for (const name of declared) if (!named.has(name)) problems.push(`${where}: ${name} is a dependency but not named under "${HEADING}"`);
  for (const name of named) if (!declared.includes(name)) problems.push(`${where}: ${name} is named under "${HEADING}" but is not a dependency`);

  const expectedFloor = floorOf.get(folder);
  const statedFloor = /\bfloor (\d+)\b/i.exec(section)?.[1];
  if (expectedFloor === undefined) problems.push(`packages/${folder}: not in the floor table of docs/08-architecture.md`);
  else if (statedFloor === undefined) problems.push(`${where}: says no floor under "${HEADING}" (docs/08-architecture.md: ${expectedFloor})`);
  else if (Number(statedFloor) !== expectedFloor) problems.push(`${where}: says floor ${statedFloor}, docs/08-architecture.md says ${expectedFloor}`);
  return problems;
}

describe('package READMEs', () => {
  const folders = readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const floorOf = floors();

  it('finds the packages and their floors', () => {
    expect(folders).toEqual(expect.arrayContaining(['errors', 'crawler', 'testing']));
    expect(floorOf.get('errors')).toBe(0);
    expect(floorOf.get('crawler')).toBeGreaterThan(floorOf.get('frontier') ?? Infinity);
  });

  it('reads only the "What it may import" section, and every workspace name in it', () => {
    const markdown = [
      '# @crawlq/x',
      'Used by `@crawlq/crawler`.',
      HEADING,
      '',
      '`@crawlq/errors` and `@crawlq/urls`; third-party: `got`. Floor 2.',
      '### A sub-heading stays in the section',
      'The `@crawlq/crawler/fetching` entry.',
      '## Tests',
      '`@crawlq/testing` is a devDependency.',
    ].join('\n');
    const section = mayImportSection(markdown) ?? '';
    expect([...workspaceNames(section)]).toEqual(['@crawlq/errors', '@crawlq/urls', '@crawlq/crawler']);
    expect(mayImportSection('# @crawlq/x\n## What it imports\n`@crawlq/errors`\n')).toBeUndefined();
  });

  for (const folder of folders) {
    it(`packages/${folder}: has a README naming its workspace dependencies and its floor`, () => {
      expect(readmeProblems(folder, floorOf)).toEqual([]);
    });
  }
});
