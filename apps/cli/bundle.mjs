#!/usr/bin/env node
// `pnpm build` (after tsc): bundles the CLI (src/main.ts, over tsc's
// dist/main.js) and `crawlq worker` alone (src/worker-main.ts, into
// dist/crawlq-worker.js), each with everything it imports, workspace packages
// from their sources. Node then reads and compiles a few files instead of
// resolving about a thousand modules, which took most of a start: a worker's start
// and the `crawl` command's own (`pnpm bench scale`
// prints where the whole command's time goes). What is loaded only when used
// (a command's modules, pg, warcio, nodemailer) goes into chunks shared by
// both, dist/crawlq-chunks/, compiled only then.
//
//   node bundle.mjs [OUTDIR]
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundledLuaFiles } from '../../packages/redis/lua-build.mjs';
import { ESM_BANNER } from './esm-banner.mjs';

const CLI_DIR = dirname(fileURLToPath(import.meta.url));
const outdir = process.argv[2] ?? join(CLI_DIR, 'dist');
// Chunk names carry a content hash: the last build's must not pile up.
rmSync(join(outdir, 'crawlq-chunks'), { recursive: true, force: true });
rmSync(join(outdir, 'crawlq-worker-chunks'), { recursive: true, force: true });
// tsc's map of the entry the bundle replaces would point stack traces at the wrong lines.
rmSync(join(outdir, 'main.js.map'), { force: true });

await build({
  entryPoints: { main: join(CLI_DIR, 'src', 'main.ts'), 'crawlq-worker': join(CLI_DIR, 'src', 'worker-main.ts') },
  outdir,
  splitting: true,
  chunkNames: 'crawlq-chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Workspace packages from src/, as the tests run them; third-party packages as Node would load them.
  conditions: ['@crawlq/source'],
  // The packages' .lua files, inlined: a bundle has no package folders to read them from.
  define: bundledLuaFiles(join(CLI_DIR, '..', '..')),
  // Optional native or alternative backends, each loaded in a try or only when configured:
  // msgpackr falls back to plain JavaScript, bullmq and pg use neither unless asked.
  // The dashboard stays a package of its own (its build): bull-board finds its
  // web assets beside its own modules, which a bundle would move.
  // playwright-core (rendering) reads its own package files at run time and
  // is loaded only by a worker's first rendered page: it stays a package.
  // esbuild and tsx (a TypeScript --crawler module) find their own files and binary at run time.
  external: ['msgpackr-extract', '@valkey/valkey-glide', 'pg-native', '@crawlq/dashboard', 'playwright-core', 'tsx', 'esbuild'],
  // CommonJS dependencies inside an ES module expect these.
  banner: { js: ESM_BANNER },
  logLevel: 'warning',
});
