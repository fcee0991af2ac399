#!/usr/bin/env node
// Rewrites test/durations.json, the order of the test files (longest first,
// see test/support/longest-first.ts), from the per-file logs of the two runs
// `pnpm test` makes, the end-to-end files and the packages' files:
//
//   cd test && CRAWLQ_TEST_CPU_LOG=/tmp/e2e.jsonl npx vitest run --config ../vitest.config.ts --maxWorkers 4
//   CRAWLQ_TEST_CPU_LOG=/tmp/packages.jsonl npx vitest run --config vitest.config.ts --dir packages --maxWorkers 3
//   node infra/test-durations.mjs /tmp/e2e.jsonl /tmp/packages.jsonl
//
// Only the order matters, so figures from a loaded machine do: every file was
// slowed alike. Plain JavaScript: no build needed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const logs = process.argv.slice(2);
if (logs.length === 0) {
  process.stderr.write('usage: node infra/test-durations.mjs <CRAWLQ_TEST_CPU_LOG file>...\n');
  process.exit(2);
}
const files = {};
for (const line of logs.flatMap((log) => readFileSync(log, 'utf8').split('\n'))) {
  if (line.trim() === '') continue;
  const entry = JSON.parse(line);
  // The log names files relative to the directory Vitest ran in: the test package's, usually.
  const path = existsSync(join(root, entry.file)) ? entry.file : join('test', entry.file);
  files[path.split('\\').join('/')] = Math.round(entry.wallS);
}
const sorted = Object.fromEntries(Object.entries(files).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)));
writeFileSync(join(root, 'test', 'durations.json'), `${JSON.stringify({ unit: 'seconds of wall time of each file in one run of the end-to-end suite or of the packages\' tests, on whatever load the machine had: only the order is used', files: sorted }, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`);
