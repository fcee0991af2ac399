import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

// Opt-in (CRAWLQ_TEST_CPU_LOG=<file>, see vitest.config.ts): one JSON line per
// test file with the CPU time it cost, its own and that of every process it
// started and reaped (crawlq commands, workers, redis-server), and its wall
// time. On two shared cores the suite's time is mostly CPU: this says where it goes.

const TICKS_PER_SECOND = 100;

/** utime + stime + cutime + cstime of this process, in seconds (Linux). */
function cpuSeconds(): { own: number; children: number } | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    // After `(comm)`: state is field 3, so utime (14) is index 11 here.
    const [utime = 0, stime = 0, cutime = 0, cstime = 0] = fields.slice(11, 15);
    return { own: (utime + stime) / TICKS_PER_SECOND, children: (cutime + cstime) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

const log = process.env.CRAWLQ_TEST_CPU_LOG;
let start: { cpu: ReturnType<typeof cpuSeconds>; wall: number } | undefined;

beforeAll(() => {
  start = { cpu: cpuSeconds(), wall: performance.now() };
});

afterAll(() => {
  const end = cpuSeconds();
  if (log === undefined || start?.cpu === undefined || end === undefined) return;
  const file = expect.getState().testPath ?? 'unknown';
  const line = {
    file: relative(process.cwd(), file),
    ownCpuS: Number((end.own - start.cpu.own).toFixed(2)),
    childCpuS: Number((end.children - start.cpu.children).toFixed(2)),
    wallS: Number(((performance.now() - start.wall) / 1000).toFixed(1)),
    load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0],
  };
  appendFileSync(log, `${JSON.stringify(line)}\n`);
});
