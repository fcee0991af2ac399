import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/longest-first.js';

// One shared config: every package's `test` script points here, so workspace
// imports resolve to TypeScript sources through the `@crawlq/source` condition
// and tests need no build.
export default defineConfig({
  resolve: {
    conditions: ['@crawlq/source'],
  },
  ssr: {
    resolve: {
      conditions: ['@crawlq/source'],
      externalConditions: ['@crawlq/source'],
    },
  },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files share their worker process one after another, loading the
    // workspace's modules once per worker rather than once per file. On a slow
    // 2-core machine, in `pnpm test`, the packages' files spent 370 s importing
    // (summed over files) and that lane took 423 s; shared, 95 s and 301 s
    // (the end-to-end files': 206 s, then 55 s). Tests keep their state in
    // their own servers and prefixes, not in module globals.
    isolate: false,
    // Two cores: for a package's own tests run alone. `pnpm test` runs the
    // end-to-end files five at a time and the packages' files three at a time
    // (test/package.json, package.json): those files mostly wait (rates,
    // restarts, timeouts). On a slow 2-core machine `pnpm test` took 12m38s
    // with the end-to-end files four at a time and 10m47s with five (one run
    // each); on a faster one, four had passed beside a busy core where five
    // once failed a wait.
    maxWorkers: 2,
    fileParallelism: true,
    // The longest files first (test/durations.json): the run ends with short ones.
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ['default'],
    // CRAWLQ_TEST_CPU_LOG=<file>: each test file appends the CPU it cost (its
    // own and its reaped child processes') and its wall time, one JSON line a file.
    setupFiles: process.env.CRAWLQ_TEST_CPU_LOG ? [fileURLToPath(new URL('./test/support/cpu-log.ts', import.meta.url))] : [],
  },
});
