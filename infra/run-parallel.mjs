#!/usr/bin/env node
// `pnpm test`'s runner: runs each "label=command" argument at once (each through
// the shell), every output line prefixed with its label, and exits non-zero when
// any failed, after all have ended, naming the ones that failed.
//
// Why: much of the end-to-end files' time, and of the packages' tests', is
// waiting (rates, restarts, timeouts), not CPU. Run side by side with the
// static checks, the suite takes the longest one's time, not the sum.
//
//   node infra/run-parallel.mjs "e2e=pnpm --filter @crawlq/e2e test" "check=pnpm check"
//
// `pnpm test` runs its static checks at a lower priority (nice 10), in two lanes
// (the type check with ESLint, which share one TypeScript program; madge with the
// docs build) so that the last minutes, when the tests are done, use both cores: they wait on
// nothing, so they can fill the end-to-end files' idle time, where at equal
// priority they took CPU from the end-to-end files, the lane that sets the
// suite's time on a busy 2-core machine.
// Plain JavaScript on purpose: it runs before anything is built.
import { spawn } from 'node:child_process';

const jobs = process.argv.slice(2).map((arg) => {
  const at = arg.indexOf('=');
  if (at <= 0) {
    process.stderr.write(`run-parallel: expected label=command, got ${JSON.stringify(arg)}\n`);
    process.exit(2);
  }
  return { label: arg.slice(0, at), command: arg.slice(at + 1) };
});

/** Writes whole lines only, each prefixed: two jobs' lines never mix within a line. */
function prefixed(label, target) {
  let pending = '';
  return {
    write(chunk) {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      if (lines.length > 0) target.write(lines.map((line) => `${label}| ${line}\n`).join(''));
    },
    end() {
      if (pending !== '') target.write(`${label}| ${pending}\n`);
      pending = '';
    },
  };
}

const started = performance.now();
const children = [];
// Ctrl-C or a CI timeout reaches the whole process group; a lone SIGTERM to this process is passed on.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) if (child.exitCode === null) child.kill(signal);
  });
}
const results = await Promise.all(
  jobs.map(
    ({ label, command }) =>
      new Promise((resolve) => {
        const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } });
        children.push(child);
        const out = prefixed(label, process.stdout);
        const err = prefixed(label, process.stderr);
        child.stdout.on('data', (chunk) => out.write(chunk));
        child.stderr.on('data', (chunk) => err.write(chunk));
        child.on('error', (error) => {
          err.write(`${error.message}\n`);
          err.end();
          resolve({ label, code: 1, seconds: (performance.now() - started) / 1000 });
        });
        child.on('close', (code, signal) => {
          out.end();
          err.end();
          const seconds = (performance.now() - started) / 1000;
          process.stdout.write(`run-parallel: ${label} ${code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`} after ${seconds.toFixed(0)} s\n`);
          resolve({ label, code: code ?? 1, seconds });
        });
      }),
  ),
);

const failed = results.filter((result) => result.code !== 0);
if (failed.length > 0) {
  process.stderr.write(`run-parallel: failed: ${failed.map((result) => result.label).join(', ')}\n`);
  process.exit(failed[0]?.code || 1);
}
