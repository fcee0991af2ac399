#!/usr/bin/env node
// Where a package's `.lua` files go when it is built, for LuaFiles
// (src/lua-files.ts) to find them as it finds them in src/:
// - `node node_modules/@crawlq/redis/lua-build.mjs` (a package's build, after
//   tsc, in the package's folder): copies src/**/*.lua to the same paths
//   under dist/, beside the modules that read them;
// - `bundledLuaFiles(root)` (esbuild's `define`, for a bundle, which has no
//   package folders): every workspace package's `.lua` files, inlined, by
//   `<package>/<path under src>`.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Paths of the `.lua` files under dir, relative to it, with '/' separators. */
function luaPaths(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.lua'))
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)).split(sep).join('/'))
    .sort();
}

/** Copies the package's src/**\/*.lua into dist/. */
export function copyLuaFiles(packageDir) {
  const paths = luaPaths(join(packageDir, 'src'));
  for (const path of paths) {
    const target = join(packageDir, 'dist', path);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(packageDir, 'src', path), target);
  }
  return paths.length;
}

/** esbuild `define` entries that put every workspace package's Lua into a bundle. */
export function bundledLuaFiles(root) {
  const files = {};
  for (const folder of readdirSync(join(root, 'packages')).sort()) {
    const packageDir = join(root, 'packages', folder);
    let name;
    try {
      name = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).name;
    } catch {
      continue;
    }
    for (const path of luaPaths(join(packageDir, 'src'))) files[`${name}/${path}`] = readFileSync(join(packageDir, 'src', path), 'utf8');
  }
  return { CRAWLQ_LUA_FILES: JSON.stringify(files) };
}

// Run as a script (through the node_modules link: compared as real paths).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) copyLuaFiles(process.cwd());
