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
    // Two cores: more parallel files would only add scheduling noise to
    // tests that run several worker processes each. The end-to-end package
    // runs three (its test script): its files mostly wait (rates, restarts,
    // timeouts), and a third in flight took its wall time from 818 s to 533 s
    // in a fresh-clone CI run each.
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
