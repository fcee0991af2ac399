import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Every package's `.lua` files, by `<package>/<path under src>`, when this
 * code runs inside an esbuild bundle: the bundle's build defines it (see
 * `lua-build.mjs`), as the bundle has no package folders to read them from.
 */
declare const CRAWLQ_LUA_FILES: Readonly<Record<string, string>> | undefined;
const BUNDLED: Readonly<Record<string, string>> | undefined = typeof CRAWLQ_LUA_FILES === 'undefined' ? undefined : CRAWLQ_LUA_FILES;

/** `--- @include "<path>"`: a path relative to the including file, or `@scope/package/<path under src>`. */
const INCLUDE_LINE = /^---[ \t]*@include[ \t]+"([^"]+)"[ \t]*$/;

/** One `.lua` file of a package, read once. */
export interface LuaFile {
  /** `<package>/<path under src>`, e.g. `@crawlq/group-limiter/lua/acquire.lua`: how include lines and error messages name it. */
  readonly id: string;
  /** Where it was read from (undefined inside a bundle, or for text a package makes in TypeScript). */
  readonly path: string | undefined;
  readonly text: string;
  /** The files its include lines name, in order. */
  readonly includes: readonly LuaFile[];
}

/** Options of {@link luaFiles}. */
export interface LuaFilesOptions {
  /** The package's name, the first part of its files' ids. */
  readonly package: string;
  /** The package's `src/` folder (or `dist/`, where its build copies the `.lua` files): `new URL('..', import.meta.url)` from `src/lua/`. */
  readonly root: URL;
  /** The packages whose files this one's include lines name (`@scope/package/...`). */
  readonly uses?: readonly LuaFiles[];
  /**
   * Files made in TypeScript, by path under src, for Lua that comes from
   * elsewhere (BullMQ's own scripts): included like the others, never read from disk.
   */
  readonly made?: Readonly<Record<string, string>>;
}

/**
 * A package's Lua: its `.lua` files, each read once (on first use, cached),
 * with their `--- @include` lines resolved to other files of the package, or
 * of the packages it `uses`.
 */
export class LuaFiles {
  readonly package: string;
  readonly #root: URL;
  readonly #uses: ReadonlyMap<string, LuaFiles>;
  readonly #made: Readonly<Record<string, string>>;
  readonly #read = new Map<string, LuaFile>();

  constructor(options: LuaFilesOptions) {
    this.package = options.package;
    this.#root = options.root.href.endsWith('/') ? options.root : new URL(`${options.root.href}/`);
    this.#uses = new Map((options.uses ?? []).map((files) => [files.package, files]));
    this.#made = options.made ?? {};
  }

  /** The file at `path` under the package's src (`lua/acquire.lua`), its includes read with it. */
  file(path: string): LuaFile {
    const normalized = normalizePath(path);
    const known = this.#read.get(normalized);
    if (known !== undefined) return known;
    const id = `${this.package}/${normalized}`;
    const { text, file } = this.#readText(normalized, id);
    const includes: LuaFile[] = [];
    for (const line of text.split('\n')) {
      const match = INCLUDE_LINE.exec(line.trimEnd());
      if (match !== null) includes.push(this.#resolve(normalized, match[1] ?? ''));
    }
    const read: LuaFile = { id, path: file, text, includes };
    this.#read.set(normalized, read);
    return read;
  }

  #readText(path: string, id: string): { readonly text: string; readonly file: string | undefined } {
    const made = this.#made[path];
    if (made !== undefined) return { text: made, file: undefined };
    if (BUNDLED !== undefined) {
      const text = BUNDLED[id];
      if (text === undefined) throw new Error(`Lua file ${id} is not in the bundle`);
      return { text, file: undefined };
    }
    const file = fileURLToPath(new URL(path, this.#root));
    try {
      return { text: readFileSync(file, 'utf8'), file };
    } catch (error) {
      throw new Error(`Lua file ${id} cannot be read from ${file}`, { cause: error });
    }
  }

  #resolve(from: string, target: string): LuaFile {
    if (target.startsWith('@')) {
      const [scope, name, ...rest] = target.split('/');
      const other = this.#uses.get(`${scope}/${name}`);
      if (other === undefined) throw new Error(`Lua file ${this.package}/${from} includes ${target}: ${scope}/${name} is not among the packages its files use`);
      return other.file(rest.join('/'));
    }
    return this.file(`${from.slice(0, from.lastIndexOf('/') + 1)}${target}`);
  }
}

/** A package's Lua files (see {@link LuaFiles}). */
export function luaFiles(options: LuaFilesOptions): LuaFiles {
  return new LuaFiles(options);
}

/**
 * The text Redis runs: the file with each include line replaced by the
 * included file (its own includes resolved the same way), each file once:
 * a file already placed is not placed again. A comment line names each
 * included file, as Redis' errors give a line of this whole text.
 */
export function composeLuaFile(file: LuaFile): string {
  const placed = new Set<string>();
  const expand = (current: LuaFile): string => {
    let next = 0;
    return current.text
      .split('\n')
      .map((line) => {
        if (!INCLUDE_LINE.test(line.trimEnd())) return line;
        const included = current.includes[next++];
        if (included === undefined || placed.has(included.id)) return `-- (included above) ${line.slice(3).trim()}`;
        placed.add(included.id);
        return `-- include: ${included.id}\n${expand(included)}`;
      })
      .join('\n');
  };
  placed.add(file.id);
  return expand(file);
}

/** `a/./b/../c.lua` -> `a/c.lua`; a path may not leave the package. */
function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.pop() === undefined) throw new Error(`Lua file path ${path} leaves its package`);
    } else parts.push(part);
  }
  return parts.join('/');
}
