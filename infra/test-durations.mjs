#!/usr/bin/env node
// Rewrites test/durations.json, the end-to-end files' order (longest first,
// see test/support/longest-first.ts), from a run's per-file log:
//
//   cd test && CRAWLQ_TEST_CPU_LOG=/tmp/files.jsonl npx vitest run --config ../vitest.config.ts
//   node infra/test-durations.mjs /tmp/files.jsonl
//
// Only the order matters, so figures from a loaded machine do: every file was
// slowed alike. Plain JavaScript: no build needed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const log = process.argv[2];
if (log === undefined) {
  process.stderr.write('usage: node infra/test-durations.mjs <CRAWLQ_TEST_CPU_LOG file>\n');
  process.exit(2);
}
const files = {};
for (const line of readFileSync(log, 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  const entry = JSON.parse(line);
  // The log names files relative to the directory Vitest ran in: the test package's, usually.
  const path = existsSync(join(root, entry.file)) ? entry.file : join('test', entry.file);
  files[path.split('\\').join('/')] = Math.round(entry.wallS);
}
const sorted = Object.fromEntries(Object.entries(files).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)));
writeFileSync(join(root, 'test', 'durations.json'), `${JSON.stringify({ unit: 'seconds of wall time of each file in one run of the end-to-end suite, on whatever load the machine had: only the order is used', files: sorted }, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`);
