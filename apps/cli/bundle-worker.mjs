#!/usr/bin/env node
// `pnpm build` (after tsc): bundles `crawlq worker` (src/worker-main.ts and
// everything it imports, workspace packages from their sources) into one
// file, dist/crawlq-worker.js. Each worker `crawl` spawns runs it: Node then
// reads and compiles one file instead of resolving about a thousand modules,
// which took most of a worker's start (issue 12; `pnpm bench worker-start`).
// What a worker imports only when a feature is used (pg, warcio, nodemailer)
// goes into chunks beside it, dist/crawlq-worker-chunks/, compiled only then.
//
//   node bundle-worker.mjs [OUTFILE]
import { rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const CLI_DIR = dirname(fileURLToPath(import.meta.url));
const outfile = process.argv[2] ?? join(CLI_DIR, 'dist', 'crawlq-worker.js');
const name = basename(outfile, '.js');
// Chunk names carry a content hash: the last build's must not pile up.
rmSync(join(dirname(outfile), `${name}-chunks`), { recursive: true, force: true });

await build({
  entryPoints: { [name]: join(CLI_DIR, 'src', 'worker-main.ts') },
  outdir: dirname(outfile),
  splitting: true,
  chunkNames: `${name}-chunks/[name]-[hash]`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Workspace packages from src/, as the tests run them; third-party packages as Node would load them.
  conditions: ['@crawlq/source'],
  // Optional native or alternative backends, each loaded in a try or only when configured:
  // msgpackr falls back to plain JavaScript, bullmq and pg use neither unless asked.
  external: ['msgpackr-extract', '@valkey/valkey-glide', 'pg-native'],
  // CommonJS dependencies inside an ES module expect these.
  banner: {
    js: [
      "import { createRequire as __crawlqCreateRequire } from 'node:module';",
      "import { fileURLToPath as __crawlqFileURLToPath } from 'node:url';",
      'const require = __crawlqCreateRequire(import.meta.url);',
      'const __filename = __crawlqFileURLToPath(import.meta.url);',
      "const __dirname = __crawlqFileURLToPath(new URL('.', import.meta.url));",
    ].join('\n'),
  },
  logLevel: 'warning',
});
