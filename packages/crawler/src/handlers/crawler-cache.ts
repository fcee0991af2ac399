import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { CrawlerCompileError } from '../errors.js';

// A TypeScript crawler compiled once into an ES module that Node imports as it
// is. Loading it through tsx instead costs every worker process seconds on a
// busy machine (tsx's loader, its hooks thread, each import resolved through
// it): paid by each of `crawl`'s workers at every start. The first process to
// load a crawler compiles it with esbuild (bundling the user's own files,
// leaving packages as imports); every later one, and every later crawl of the
// same code, finds it compiled and only hashes the files.

/** A crawler module compiled into the cache: what to import, and the hash of the code it was made from. */
export interface CompiledCrawler {
  /** file: URL of the compiled ES module. */
  readonly url: string;
  /** The crawler's code hash: its entry and the local files it imports (see {@link hashFiles}). */
  readonly hash: string;
}

/**
 * Bumped whenever the compiled module's shape changes (esbuild options, the
 * plugin below): a cache written by another crawlq is then compiled again.
 */
const FORMAT = 'v1';

/**
 * Where compiled crawlers go: `node_modules/.cache/crawlq` in the nearest
 * node_modules above the crawler. A package the module imports resolves from
 * there exactly as from the crawler itself (Node looks in the same
 * node_modules folders, in the same order); undefined when there is none
 * (the module could not import crawlq from its own folder either).
 */
export function crawlerCacheDir(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const modules = join(dir, 'node_modules');
    if (isDirectory(modules)) return join(modules, '.cache', 'crawlq');
    if (dirname(dir) === dir) return undefined;
  }
}

interface Manifest {
  readonly format: string;
  readonly source: string;
  /** The crawler's local files (absolute), its entry first. */
  readonly files: readonly string[];
  readonly hash: string;
}

/** The manifest of one source file: by its path, so each crawler file has one, replaced when it is compiled again. */
function manifestPath(cacheDir: string, file: string): string {
  return join(cacheDir, `${basename(file, extname(file))}-${createHash('sha256').update(file).digest('hex').slice(0, 12)}.json`);
}

function modulePath(cacheDir: string, file: string, hash: string): string {
  return join(cacheDir, `${basename(file, extname(file))}-${hash}-${FORMAT}.mjs`);
}

/**
 * The compiled crawler when the cache holds one made from the code as it is
 * now (its files hash to the same value), without loading esbuild; undefined
 * otherwise. A file added to the crawler is imported by a file that changed,
 * so its hash differs too.
 */
export function cachedCrawler(file: string): CompiledCrawler | undefined {
  const cacheDir = crawlerCacheDir(file);
  if (cacheDir === undefined) return undefined;
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath(cacheDir, file), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  if (manifest.format !== FORMAT || manifest.source !== file || !Array.isArray(manifest.files)) return undefined;
  const hash = hashFiles(dirname(file), manifest.files);
  const compiled = modulePath(cacheDir, file, hash);
  if (hash !== manifest.hash || !existsSync(compiled)) return undefined;
  return { url: pathToFileURL(compiled).href, hash };
}

/**
 * Compiles the crawler into the cache (see {@link cachedCrawler}); undefined
 * when there is no cache to write to (no node_modules above the crawler, or a
 * read-only one): the caller loads it another way.
 * @throws CrawlerCompileError for code that does not compile
 */
export async function compileCrawler(file: string): Promise<CompiledCrawler | undefined> {
  const cacheDir = crawlerCacheDir(file);
  if (cacheDir === undefined) return undefined;
  try {
    mkdirSync(cacheDir, { recursive: true });
  } catch {
    return undefined;
  }
  const { build } = await import('esbuild');
  const cwd = process.cwd();
  let result: Awaited<ReturnType<typeof build<{ write: false; metafile: true }>>>;
  try {
    result = await build({
      entryPoints: [file],
      absWorkingDir: cwd,
      // Any name in the cache folder: the source map's paths are relative to it.
      outfile: join(cacheDir, 'compiling.mjs'),
      write: false,
      metafile: true,
      bundle: true,
      // Packages stay imports, resolved by Node at run time from the cache
      // folder's node_modules (see crawlerCacheDir): the crawlq the module
      // imports is the one it would import run as it is.
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Stack traces of a route's errors name the user's files and lines (tsx did so too).
      sourcemap: 'inline',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [ownLocation],
    });
  } catch (error) {
    throw new CrawlerCompileError(compileMessage(error, cwd), { cause: error });
  }
  const files = [file, ...Object.keys(result.metafile.inputs).map((input) => resolve(cwd, input)).filter((input) => input !== file)];
  const hash = hashFiles(dirname(file), files);
  const compiled = modulePath(cacheDir, file, hash);
  const code = result.outputFiles.find((output) => output.path.endsWith('.mjs'))?.contents;
  if (code === undefined) throw new Error(`esbuild wrote no module for ${file}`);
  try {
    // Written whole, then renamed: processes compiling the same crawler at once never import half a file.
    writeAtomically(compiled, code);
    writeAtomically(manifestPath(cacheDir, file), JSON.stringify({ format: FORMAT, source: file, files, hash } satisfies Manifest));
  } catch {
    return undefined;
  }
  return { url: pathToFileURL(compiled).href, hash };
}

/**
 * A module's own location as it was: the compiled module lives elsewhere,
 * but `import.meta.url` (and `dirname`, `filename`) in each of the user's
 * files still names that file, so a file read relative to it is found.
 * Replaced in the text, on one line, so the source map stays right.
 */
const ownLocation: Plugin = {
  name: 'crawlq-own-location',
  setup(builder) {
    builder.onLoad({ filter: /\.(?:[cm]?[jt]s|[jt]sx)$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const contents = text
        .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href))
        .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(args.path))
        .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(dirname(args.path)));
      return { contents, loader: loaderOf(args.path) };
    });
  },
};

function loaderOf(path: string): 'ts' | 'tsx' | 'js' | 'jsx' {
  const ext = extname(path);
  if (ext === '.tsx') return 'tsx';
  if (ext === '.jsx') return 'jsx';
  return ext.includes('t') ? 'ts' : 'js';
}

/** esbuild's first error as `file:line:column: message`, the file as given from the working directory. */
function compileMessage(error: unknown, cwd: string): string {
  const first = (error as { errors?: { text: string; location: { file: string; line: number; column: number } | null }[] }).errors?.[0];
  if (first === undefined) return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
  if (first.location === null) return first.text;
  const { file, line, column } = first.location;
  const shown = isAbsolute(file) ? relative(cwd, file) : file;
  return `${shown}:${line}:${column + 1}: ${first.text}`;
}

function writeAtomically(path: string, contents: string | Uint8Array): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, contents);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Every file by its path from the crawler's directory and its bytes: the same code anywhere hashes the same. */
export function hashFiles(root: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort()) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      continue; // A virtual module of the loader, not a file.
    }
    hash.update(relative(root, file)).update('\0').update(bytes).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}
