// Whether the built CLI (dist/) is current: shared by the launcher (`pnpm
// crawlq`) and the benchmarks, which must measure the build users run.
// Plain JavaScript on purpose: it must run before anything is built.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(CLI_DIR, '..', '..');
/** The built CLI entry: what `pnpm crawlq` runs when the build is current, and what `crawl` spawns workers from. */
export const BUILT_ENTRY = join(CLI_DIR, 'dist', 'main.js');
/** `crawlq worker` alone, bundled into one file (bundle.mjs): what `crawl` spawns from the build. */
export const WORKER_BUNDLE = join(CLI_DIR, 'dist', 'crawlq-worker.js');
/** The TypeScript entry, run through tsx when the build is stale. */
export const SOURCE_ENTRY = join(CLI_DIR, 'src', 'main.ts');

/**
 * The built file that runs `crawlq <args>`: the bundled worker for `worker`
 * (one file, a faster start), the built CLI for every other command.
 */
export function builtEntryFor(args) {
  const command = args.find((arg) => !arg.startsWith('-'));
  return command === 'worker' && existsSync(WORKER_BUNDLE) ? WORKER_BUNDLE : BUILT_ENTRY;
}
/** Written by build-stamp.mjs once `pnpm build` succeeded: when that build started (ms). Outside dist/ (see build-stamp.mjs). */
export const STAMP = join(CLI_DIR, '.build-started');

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
export function staleReason() {
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
