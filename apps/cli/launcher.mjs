#!/usr/bin/env node
// `pnpm crawlq`: runs the built CLI (dist/, from `pnpm build` or the setup
// command) when it is up to date, which starts in a fraction of the time the
// TypeScript sources take through tsx. When any source of the CLI or
// of a workspace package it uses changed after the last `pnpm build` started
// (an edit, a checkout, no build at all), it runs the sources through tsx
// instead: stale JavaScript must never run silently.
// Plain JavaScript on purpose: it must run before anything is built.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { builtEntryFor, SOURCE_ENTRY, staleReason } from './build-freshness.mjs';

// Hints this CLI prints (e.g. the command in an alert e-mail) name it the way it was run.
process.env.CRAWLQ_INVOKED_AS ??= 'pnpm crawlq';

let reason;
try {
  reason = staleReason();
} catch (error) {
  reason = `cannot check the build (${error instanceof Error ? error.message : String(error)})`;
}

if (reason === undefined) {
  // `crawlq worker` runs the bundled worker, one file that starts faster; the
  // workers `crawl` spawns do too (worker-launcher.ts), else they re-run process.argv[1]:
  // the built entry, not this check.
  const entry = builtEntryFor(process.argv.slice(2));
  process.argv[1] = entry;
  await import(pathToFileURL(entry).href);
} else {
  if (process.stderr.isTTY) process.stderr.write(`crawlq: ${reason}; running from source (slower start; \`pnpm build\` makes it fast)\n`);
  const child = spawn(process.execPath, ['--conditions=@crawlq/source', '--import', import.meta.resolve('tsx'), SOURCE_ENTRY, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // A signal sent to this process alone is passed on. Ctrl-C on a terminal
  // reaches the child by itself: passing it on too would be a second Ctrl-C,
  // which ends a crawl at once instead of gracefully.
  const onTerminal = [process.stdin, process.stdout, process.stderr].some((stream) => stream.isTTY === true);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (signal !== 'SIGINT' || !onTerminal) child.kill(signal);
    });
  }
  child.on('exit', (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}
