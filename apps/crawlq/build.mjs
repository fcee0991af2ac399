#!/usr/bin/env node
// `pnpm build` for the public package: bundles the CLI (dist/main.js, the
// `crawlq` bin), `crawlq worker` alone (dist/crawlq-worker.js, what `crawl`
// spawns) and the library entry (dist/index.js) with every workspace package
// inlined from its sources, and the library's types into one dist/index.d.ts.
// Third-party packages stay imports: they are this package's `dependencies`,
// checked below against what the bundle really imports and against the
// versions the workspace pins and tests.
import { copyFileSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { bundledLuaFiles } from '../../packages/redis/lua-build.mjs';
import { ESM_BANNER } from '../cli/esm-banner.mjs';

const DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(DIR, '..', '..');
const DIST = join(DIR, 'dist');
const manifest = JSON.parse(readFileSync(join(DIR, 'package.json'), 'utf8'));

/** Optional backends loaded only in a try or when configured (as in apps/cli/bundle.mjs): never installed for users. */
const OPTIONAL = new Set(['msgpackr-extract', '@valkey/valkey-glide', 'pg-native']);
const builtins = new Set(builtinModules);
/**
 * Packages the bundle reads files of at run time instead of importing them:
 * the dashboard serves uPlot's browser build (packages/dashboard/src/chart-assets.ts).
 * Each counts as imported when the bundle names one of its files.
 */
const READ_AT_RUN_TIME = new Set(['uplot']);

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

rmSync(DIST, { recursive: true, force: true });

// The CLI's entries by path: apps/cli is an executable with no exports, and
// this package is the one place its code is re-packed.
const result = await build({
  entryPoints: {
    main: join(ROOT, 'apps', 'cli', 'src', 'main.ts'),
    'crawlq-worker': join(ROOT, 'apps', 'cli', 'src', 'worker-main.ts'),
    index: join(DIR, 'src', 'index.ts'),
  },
  outdir: DIST,
  splitting: true,
  // The CLI finds the worker bundle as ../crawlq-worker.js from a chunk (worker-launcher.ts).
  chunkNames: 'crawlq-chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: ['@crawlq/source'],
  // The packages' .lua files, inlined (packages/redis/lua-build.mjs): inside the bundle, never read from disk.
  define: bundledLuaFiles(ROOT),
  metafile: true,
  plugins: [
    {
      name: 'third-party-external',
      setup(builder) {
        // Bare imports other than the workspace's own: resolved by Node from the user's node_modules.
        builder.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('@crawlq/') || args.path.startsWith('node:') || builtins.has(args.path)) return undefined;
          return { path: args.path, external: true };
        });
      },
    },
  ],
  // CommonJS inside an ES module may expect require, __filename and __dirname.
  banner: { js: ESM_BANNER },
  logLevel: 'warning',
});

// What the bundle imports from outside must be exactly the declared
// dependencies, each at the version the workspace pins (and so tests).
const imported = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const entry of output.imports) {
    if (!entry.external || entry.path.startsWith('node:') || builtins.has(entry.path)) continue;
    const name = packageOf(entry.path);
    if (!OPTIONAL.has(name)) imported.add(name);
  }
}
for (const name of READ_AT_RUN_TIME) {
  const named = Object.keys(result.metafile.outputs).some((file) => readFileSync(file, 'utf8').includes(`${name}/dist/`));
  if (named) imported.add(name);
}
// Optional peers (playwright-core, for --render) are imported only when used and installed by the user who needs them.
const declared = { ...manifest.dependencies, ...manifest.peerDependencies };
const pinned = workspacePins();
const problems = [
  ...[...imported].filter((name) => declared[name] === undefined).map((name) => `the bundle imports ${name}, which package.json does not declare`),
  ...Object.keys(declared).filter((name) => !imported.has(name)).map((name) => `package.json declares ${name}, which the bundle never imports`),
  ...Object.entries(declared)
    .filter(([name, version]) => pinned.get(name) !== undefined && !pinned.get(name).has(version))
    .map(([name, version]) => `${name} is ${version} here but ${[...pinned.get(name)].join(', ')} in the workspace`),
];
if (problems.length > 0) {
  process.stderr.write(`crawlq build: dependencies do not match the bundle:\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}

// One declaration file: the workspace packages' types inlined, third-party ones imported.
// A workspace package is reached through the node_modules links of each package that
// imports it: by its real path it is one module, each of its types declared once.
const realPaths = {
  name: 'real-paths',
  async resolveId(source, importer, options) {
    if (importer === undefined) return null;
    const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
    return resolved && !resolved.external ? { ...resolved, id: realpathSync(resolved.id) } : resolved;
  },
};
const bundle = await rollup({
  input: join(DIR, 'src', 'index.ts'),
  plugins: [realPaths, dts({ respectExternal: true, tsconfig: join(DIR, 'tsconfig.json'), compilerOptions: { customConditions: [] } })],
  external: (id) => !id.startsWith('@crawlq/') && !id.startsWith('.') && !id.startsWith('/') && /^[@\w]/.test(id),
});
await bundle.write({ file: join(DIST, 'index.d.ts'), format: 'es' });
await bundle.close();

// npm ships these only from the package's own folder.
for (const name of ['LICENSE', 'CHANGELOG.md']) copyFileSync(join(ROOT, name), join(DIR, name));

/** Third-party versions the workspace packages declare, by name. */
function workspacePins() {
  const pins = new Map();
  for (const parent of ['apps', 'packages']) {
    for (const name of readdirSync(join(ROOT, parent))) {
      let other;
      try {
        other = JSON.parse(readFileSync(join(ROOT, parent, name, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      if (other.name === manifest.name) continue;
      for (const [dep, version] of Object.entries(other.dependencies ?? {})) {
        if (!pins.has(dep)) pins.set(dep, new Set());
        pins.get(dep).add(version);
      }
    }
  }
  return pins;
}
