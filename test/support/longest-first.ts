import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Test files in the order that ends the run soonest: the longest first, so
// that the last files to start are short ones and both workers finish close
// together. Vitest orders by the durations it cached in an earlier run, but CI
// runs a fresh clone with no cache, and Vitest then falls back to file size:
// the packed-package file, among the longest, started third. The durations in
// test/durations.json (rewritten by `node infra/test-durations.mjs`) stand in
// for the missing cache.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TABLE = fileURLToPath(new URL('../durations.json', import.meta.url));

function recordedSeconds(): ReadonlyMap<string, number> {
  try {
    const table = JSON.parse(readFileSync(TABLE, 'utf8')) as { files?: Record<string, number> };
    return new Map(Object.entries(table.files ?? {}));
  } catch {
    // No table: Vitest's own order.
    return new Map();
  }
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = recordedSeconds();
    const recorded = (file: TestSpecification) => seconds.get(relative(ROOT, file.moduleId).split('\\').join('/'));
    const base = await super.sort(files);
    // Files the table does not know yet (new since it was written) follow the
    // recorded ones in Vitest's order: most files are short, and a recorded long
    // one started late would be the run's tail.
    const known = base.filter((file) => recorded(file) !== undefined).sort((a, b) => (recorded(b) ?? 0) - (recorded(a) ?? 0));
    return [...known, ...base.filter((file) => recorded(file) === undefined)];
  }
}
