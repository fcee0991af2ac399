#!/usr/bin/env node
// `pnpm build`: runs the given build command (turbo) and, when it succeeds,
// records when it started in apps/cli/dist/.build-started. The launcher
// (launcher.mjs) runs the built CLI only if no source changed after that
// moment. A file's own mtime cannot date the build: turbo leaves outputs it
// finds unchanged in place, so a touched or checked-out source would look
// newer than its build forever.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAMP = join(dirname(fileURLToPath(import.meta.url)), 'dist', '.build-started');

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write('usage: build-stamp.mjs COMMAND [ARGS...]\n');
  process.exit(2);
}
const started = Date.now();
const result = spawnSync(command, args, { stdio: 'inherit', shell: false });
if (result.status !== 0) process.exit(result.status ?? 1);
mkdirSync(dirname(STAMP), { recursive: true });
writeFileSync(STAMP, `${started}\n`);
