#!/usr/bin/env node
// `pnpm build`: runs the given build command (turbo) and, when it succeeds,
// records when it started in apps/cli/.build-started. The launcher
// (launcher.mjs) runs the built CLI only if no source changed after that
// moment. A file's own mtime cannot date the build: turbo leaves outputs it
// finds unchanged in place, so a touched or checked-out source would look
// newer than its build forever. The stamp is kept out of dist/: turbo caches
// dist/ as the build's output and puts it back on a cache hit, stamp and all,
// so a later build (`npm pack` runs one) brought back an older build's moment
// and every crawlq process after it ran from source.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import { STAMP } from './build-freshness.mjs';

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
