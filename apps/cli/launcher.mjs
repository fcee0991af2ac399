#!/usr/bin/env node
// `pnpm crawlq`: runs the built CLI (dist/, from `pnpm build` or the setup
// command) when it is up to date, which starts in a fraction of the time the
// TypeScript sources take through tsx (issue 12). When any source of the CLI or
// of a workspace package it uses changed after the last `pnpm build` started
// (an edit, a checkout, no build at all), it runs the sources through tsx
// instead: stale JavaScript must never run silently.
// Plain JavaScript on purpose: it must run before anything is built.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CLI_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(CLI_DIR, '..', '..');
const BUILT_ENTRY = join(CLI_DIR, 'dist', 'main.js');
const SOURCE_ENTRY = join(CLI_DIR, 'src', 'main.ts');
/** Written by build-stamp.mjs once `pnpm build` succeeded: when that build started (ms). */
const STAMP = join(CLI_DIR, 'dist', '.build-started');

/** Newest modification time of the files under `dir` (0: none). */
function newest(dir) {
  let found = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    found = Math.max(found, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return found;
}

/** Workspace package directories by name. */
function workspacePackages() {
  const byName = new Map();
  for (const parent of ['apps', 'packages']) {
    for (const entry of readdirSync(join(ROOT, parent), { withFileTypes: true })) {
      const file = join(ROOT, parent, entry.name, 'package.json');
      if (entry.isDirectory() && existsSync(file)) byName.set(JSON.parse(readFileSync(file, 'utf8')).name, join(ROOT, parent, entry.name));
    }
  }
  return byName;
}

/** Why the build cannot be trusted, or undefined when every package the CLI loads was built after its last change. */
function staleReason() {
  if (!existsSync(STAMP)) return 'no complete `pnpm build` yet';
  const built = Number(readFileSync(STAMP, 'utf8'));
  if (!Number.isFinite(built)) return 'the build stamp is unreadable';
  const packages = workspacePackages();
  const pending = ['@crawlq/cli'];
  const seen = new Set(pending);
  while (pending.length > 0) {
    const dir = packages.get(pending.pop());
    if (dir === undefined) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (name.startsWith('@crawlq/') && !seen.has(name)) {
        seen.add(name);
        pending.push(name);
      }
    }
    if (!['index.js', 'main.js'].some((name) => existsSync(join(dir, 'dist', name)))) return `${manifest.name} is not built`;
    const changed = Math.max(
      newest(join(dir, 'src')),
      ...['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((name) => (existsSync(join(dir, name)) ? statSync(join(dir, name)).mtimeMs : 0)),
    );
    if (changed > built) return `${manifest.name} changed since its last build`;
  }
  return undefined;
}

// Hints this CLI prints (e.g. the command in an alert e-mail) name it the way it was run.
process.env.CRAWLQ_INVOKED_AS ??= 'pnpm crawlq';

let reason;
try {
  reason = staleReason();
} catch (error) {
  reason = `cannot check the build (${error instanceof Error ? error.message : String(error)})`;
}

if (reason === undefined) {
  // Workers that `crawl` spawns re-run this entry (process.argv[1]): the built one, not this check.
  process.argv[1] = BUILT_ENTRY;
  await import(pathToFileURL(BUILT_ENTRY).href);
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
