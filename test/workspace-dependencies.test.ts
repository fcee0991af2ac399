import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Declared dependencies decide turbo's build order and what a deployed package
// installs, so they must say what the code really imports: a declared but
// unused workspace dependency orders builds falsely, and an undeclared import
// works only by pnpm hoisting luck.

const root = resolve(import.meta.dirname, '..');
const builtins = new Set(builtinModules);
/** Shared tooling (vitest, eslint, test servers) is declared once, at the root, for test code only. */
const rootTooling = new Set(Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest).devDependencies ?? {}));

interface Manifest {
  name: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface WorkspacePackage {
  dir: string;
  manifest: Manifest;
}

function workspacePackages(): WorkspacePackage[] {
  const dirs = ['apps', 'packages'].flatMap((parent) =>
    readdirSync(join(root, parent)).map((name) => join(root, parent, name)),
  );
  return [...dirs, join(root, 'test')]
    .filter((dir) => statSync(join(dir, 'package.json'), { throwIfNoEntry: false })?.isFile() === true)
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest }));
}

function sourceFiles(dir: string): string[] {
  const entries = statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true ? readdirSync(dir, { withFileTypes: true }) : [];
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(path);
    return /\.(ts|mts|tsx|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

interface ImportSite {
  specifier: string;
  typeOnly: boolean;
  file: string;
}

const IMPORT_PATTERN =
  /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/gm;

export function importsOf(file: string, text: string): ImportSite[] {
  const sites: ImportSite[] = [];
  for (const match of text.matchAll(IMPORT_PATTERN)) {
    const specifier = match[2] ?? match[3] ?? match[4];
    if (specifier !== undefined) sites.push({ specifier, typeOnly: match[1] !== undefined, file });
  }
  return sites;
}

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`; undefined for relative and built-in imports. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (name === undefined || builtins.has(name)) return undefined;
  return name;
}

interface Findings {
  undeclared: string[];
  unusedWorkspace: string[];
  runtimeInDev: string[];
}

function check(pkg: WorkspacePackage): Findings {
  const { manifest, dir } = pkg;
  const runtime = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
  const dev = new Set(Object.keys(manifest.devDependencies ?? {}));
  // The e2e package has no src: everything it holds is test code.
  const isTestPackage = relative(root, dir) === 'test';
  const srcFiles = isTestPackage ? [] : sourceFiles(join(dir, 'src'));
  const otherFiles = isTestPackage
    ? sourceFiles(dir)
    : [...sourceFiles(join(dir, 'test')), ...readdirSync(dir).filter((name) => /\.(ts|mts|js|mjs)$/.test(name)).map((name) => join(dir, name))];

  // The public package (not private) inlines the workspace packages it imports
  // into its bundle: they are build inputs (devDependencies), never installed.
  const bundlesWorkspace = manifest.private !== true;
  const findings: Findings = { undeclared: [], unusedWorkspace: [], runtimeInDev: [] };
  const used = new Set<string>();
  // What the shipped code imports: a runtime dependency only tests import belongs in devDependencies.
  const usedInSrc = new Set<string>();
  const visit = (files: string[], inSrc: boolean) => {
    // This file's own examples of import statements are not imports.
    for (const file of files.filter((path) => path !== import.meta.filename)) {
      for (const site of importsOf(file, readFileSync(file, 'utf8'))) {
        const name = packageOf(site.specifier);
        if (name === undefined || name === manifest.name) continue;
        used.add(name);
        if (inSrc) usedInSrc.add(name);
        const where = `${relative(root, file)} imports ${name}`;
        if (!runtime.has(name) && !dev.has(name) && (inSrc || !rootTooling.has(name))) findings.undeclared.push(where);
        // Type-only imports vanish at runtime, so a devDependency serves them.
        else if (inSrc && !runtime.has(name) && !site.typeOnly && !(bundlesWorkspace && name.startsWith('@crawlq/'))) findings.runtimeInDev.push(`${where} (a devDependency)`);
      }
    }
  };
  visit(srcFiles, true);
  visit(otherFiles, false);
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (!name.startsWith('@crawlq/')) continue;
    if (bundlesWorkspace) {
      findings.unusedWorkspace.push(`${manifest.name} is published: ${name} must be bundled (a devDependency), not installed`);
      continue;
    }
    if (!used.has(name)) findings.unusedWorkspace.push(`${manifest.name} declares ${name} but never imports it`);
    else if (!isTestPackage && !usedInSrc.has(name)) findings.unusedWorkspace.push(`${manifest.name} declares ${name} as a dependency but only its tests import it (a devDependency)`);
  }
  return findings;
}

describe('workspace dependencies match imports', () => {
  const packages = workspacePackages();

  it('finds the workspace packages', () => {
    expect(packages.map((pkg) => pkg.manifest.name)).toEqual(expect.arrayContaining(['@crawlq/cli', '@crawlq/crawler', '@crawlq/e2e']));
  });

  it('recognises every import form it checks', () => {
    const text = [
      "import { a } from '@crawlq/urls';",
      "import type { B } from 'bullmq';",
      "export { c } from 'ioredis/built/x.js';",
      "import 'pino';",
      "const m = await import('got');",
      "import { readFile } from 'node:fs/promises';",
      "import { join } from 'path';",
      "import { x } from './local.js';",
    ].join('\n');
    const found = importsOf('x.ts', text).map((site) => [packageOf(site.specifier), site.typeOnly]);
    expect(found).toEqual([
      ['@crawlq/urls', false],
      ['bullmq', true],
      ['ioredis', false],
      ['pino', false],
      ['got', false],
      [undefined, false],
      [undefined, false],
      [undefined, false],
    ]);
  });

  for (const pkg of packages) {
    it(`${pkg.manifest.name}: imports only what it declares, declares no unused workspace package`, () => {
      expect(check(pkg)).toEqual({ undeclared: [], unusedWorkspace: [], runtimeInDev: [] });
    });
  }
});
