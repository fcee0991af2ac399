#!/usr/bin/env node
// `pnpm check`: the type check (what `tsc -p` of each program reports) and
// ESLint's typed rules in one process, over one TypeScript program per
// tsconfig. Run apart, `tsc` and ESLint each parse, bind and type the whole
// workspace: on a 2-core machine that was about 30 s and 50 s of CPU, inside a
// test suite bound by CPU. Here ESLint's rules read the types the check has
// already computed.
//
//   node infra/check-static.mjs            both
//   node infra/check-static.mjs --types    the type check only (`pnpm typecheck`)
//
// Plain JavaScript on purpose: it runs before anything is built.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The workspace's programs: the bench's own, since its Crawlee brings the DOM's types, which the rest must not see. */
const PROJECTS = ['tsconfig.check.json', 'bench/tsconfig.json'];
/** What ESLint lints (what `pnpm lint` names): every package's src and test, every app's src, test/ and bench/. */
function lintedDirectories() {
  const inside = (parent, child) => readdirSync(resolve(ROOT, parent)).map((name) => join(parent, name, child)).filter((path) => existsSync(resolve(ROOT, path)));
  return [...inside('packages', 'src'), ...inside('packages', 'test'), ...inside('apps', 'src'), 'test', 'bench'];
}

const typesOnly = process.argv.includes('--types');
const started = performance.now();

function createProgram(project) {
  const path = resolve(ROOT, project);
  const read = ts.readConfigFile(path, ts.sys.readFile);
  if (read.error) return { program: undefined, diagnostics: [read.error] };
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(path), undefined, path);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences });
  return { program, diagnostics: [...parsed.errors, ...ts.getPreEmitDiagnostics(program)] };
}

const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
const programs = [];
let typeErrors = 0;
for (const project of PROJECTS) {
  const { program, diagnostics } = createProgram(project);
  if (program) programs.push(program);
  const errors = diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  typeErrors += errors.length;
  if (diagnostics.length > 0) process.stdout.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
}
process.stdout.write(`check: type check of ${PROJECTS.join(' and ')}: ${typeErrors === 0 ? 'no errors' : `${typeErrors} error(s)`} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);

let lintErrors = 0;
if (!typesOnly && programs.length === PROJECTS.length) {
  const linting = performance.now();
  // Loaded here: the type check alone (`pnpm typecheck`) needs none of ESLint.
  const { ESLint } = await import('eslint');
  // The config's own parser options name the same tsconfig files; the programs replace them.
  const eslint = new ESLint({ cwd: ROOT, overrideConfig: { languageOptions: { parserOptions: { project: null, programs } } } });
  const results = await eslint.lintFiles(lintedDirectories());
  lintErrors = results.reduce((sum, result) => sum + result.errorCount + result.fatalErrorCount, 0);
  const formatter = await eslint.loadFormatter('stylish');
  const text = await formatter.format(results);
  if (text !== '') process.stdout.write(text);
  process.stdout.write(`check: ESLint over ${results.length} files: ${lintErrors === 0 ? 'no errors' : `${lintErrors} error(s)`} (${((performance.now() - linting) / 1000).toFixed(1)} s)\n`);
}
process.exitCode = typeErrors + lintErrors > 0 ? 1 : 0;
