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
    // workspace's modules once per worker rather than once per file: on a slow
    // 2-core machine loading them took 370 s of the packages' 423 s of worker
    // time and 206 s of the end-to-end files'. Tests keep their state in
    // their own servers and prefixes, not in module globals.
    isolate: false,
    // Two cores: for a package's own tests run alone. `pnpm test` runs the
    // end-to-end files four at a time and the packages' files three at a time
    // (test/package.json, package.json): those files mostly wait (rates,
    // restarts, timeouts). On a quiet 2-core machine `pnpm test` took 8m35s
    // with the end-to-end files three at a time, 7m02s with four and 6m53s
    // with five; four passed in 8m25s beside a busy core, where five failed a wait.
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
