import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, extname, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from '@crawlq/config';
import type { Crawler } from './crawler-types.js';
import { CrawlerCompileError } from '../errors.js';
import { cachedCrawler, compileCrawler, hashFiles, type CompiledCrawler } from './crawler-cache.js';
import { checkDefinition, isCrawler } from './define-crawler.js';

/** A crawler ready to run, and what names it in the fleet's crawl definition. */
export interface LoadedCrawler {
  readonly crawler: Crawler;
  /** `name@hash`: the crawler's name and a hash of its code (the module and the local files it imports). */
  readonly identity: string;
}

/** The identity of the built-in page record crawler, which a crawl without --crawler runs. */
export const BUILT_IN_CRAWLER = 'page-record (built-in)';

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * Loads `--crawler FILE`: TypeScript compiled once into a cached ES module
 * (see crawler-cache.ts; through tsx's loader when there is no cache to
 * write), JavaScript as it is. Its default export must be a
 * `defineCrawler()` crawler.
 * @throws ConfigError (exit code 2) for a missing file, a module that fails to compile or load, or a wrong export
 */
export function loadCrawler(path: string): Promise<LoadedCrawler> {
  // Once per process and file: a worker started ahead loads it while it waits (see preloadCrawler).
  const file = resolve(path);
  let loading = LOADING.get(file);
  if (loading === undefined) {
    loading = loadCrawlerFile(path, file);
    LOADING.set(file, loading);
  }
  return loading;
}

/**
 * Starts loading a crawler module now, for a later {@link loadCrawler} of the
 * same file to find loaded (or failed: it then throws what the load threw).
 * A worker that `crawl` starts ahead loads it while it waits for the word to
 * start. A TypeScript crawler only when it is compiled already: the
 * coordinator compiles it meanwhile, before it gives that word, and the
 * worker then imports what it wrote instead of compiling it again.
 */
export function preloadCrawler(path: string): void {
  const file = resolve(path);
  if (LOADING.has(file) || !existsSync(file)) return;
  if (TYPESCRIPT.has(extname(file))) {
    const compiled = cachedCrawler(file);
    if (compiled === undefined) return;
    const loading = importCrawler(path, file, compiled);
    LOADING.set(file, loading);
    loading.catch(() => undefined);
    return;
  }
  loadCrawler(path).catch(() => undefined);
}

const LOADING = new Map<string, Promise<LoadedCrawler>>();

async function loadCrawlerFile(path: string, file: string): Promise<LoadedCrawler> {
  if (!existsSync(file)) throw new ConfigError('--crawler', `${path}: no such file`);
  if (!TYPESCRIPT.has(extname(file))) return crawlerOf(path, file, { loaded: await importModule(path, pathToFileURL(file).href), hash: hashFiles(dirname(file), [file]) });
  let compiled = cachedCrawler(file);
  if (compiled === undefined) {
    try {
      compiled = await compileCrawler(file);
    } catch (error) {
      if (error instanceof CrawlerCompileError) throw new ConfigError('--crawler', `${path} failed to compile: ${error.message}`, { cause: error });
      throw error;
    }
  }
  return compiled === undefined ? loadThroughTsx(path, file) : importCrawler(path, file, compiled);
}

async function importCrawler(path: string, file: string, compiled: CompiledCrawler): Promise<LoadedCrawler> {
  // A route's error names the user's .ts file and line, as it did through tsx.
  process.setSourceMapsEnabled(true);
  return crawlerOf(path, file, { loaded: await importModule(path, compiled.url), hash: compiled.hash });
}

/** Where the cache cannot be written: tsx's loader, in this process. */
async function loadThroughTsx(path: string, file: string): Promise<LoadedCrawler> {
  const local = new Set<string>([file]);
  let loaded: unknown;
  try {
    const { tsImport } = await import('tsx/esm/api');
    loaded = await tsImport(pathToFileURL(file).href, {
      parentURL: import.meta.url,
      onImport: (imported) => {
        // The user's own files (not packages) make the crawler's hash.
        if (imported.startsWith('file:') && !imported.includes('/node_modules/')) local.add(fileURLToPath(imported.split('?')[0] ?? imported));
      },
    });
  } catch (error) {
    throw loadFailure(path, error);
  }
  return crawlerOf(path, file, { loaded, hash: hashFiles(dirname(file), [...local]) });
}

async function importModule(path: string, url: string): Promise<unknown> {
  try {
    return (await import(url)) as unknown;
  } catch (error) {
    throw loadFailure(path, error);
  }
}

function loadFailure(path: string, error: unknown): ConfigError {
  return new ConfigError('--crawler', `${path} failed to load: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, { cause: error });
}

function crawlerOf(path: string, file: string, { loaded, hash }: { loaded: unknown; hash: string }): LoadedCrawler {
  const crawler = defaultExport(loaded);
  if (!isCrawler(crawler)) {
    try {
      checkDefinition(crawler);
    } catch (error) {
      throw new ConfigError('--crawler', `${path}: the default export is not a crawler (${error instanceof Error ? error.message : String(error)}); export default defineCrawler({ routes, defaultRoute })`);
    }
    throw new ConfigError('--crawler', `${path}: the default export is not made by defineCrawler(); export default defineCrawler({ routes, defaultRoute })`);
  }
  const name = crawler.name ?? basename(file, extname(file));
  return { crawler, identity: `${name}@${hash}` };
}

/** A crawler given as an object (createCrawl): named by its name and a hash of its functions' source. */
export function inlineCrawler(crawler: Crawler): LoadedCrawler {
  const hash = createHash('sha256');
  for (const [label, handler] of Object.entries(crawler.routes).sort(([a], [b]) => a.localeCompare(b))) hash.update(`${label}\0${String(handler)}\0`);
  for (const hook of [crawler.beforeRequest, crawler.afterResponse, crawler.onFailure]) hash.update(`${String(hook)}\0`);
  hash.update(crawler.defaultRoute);
  return { crawler, identity: `${crawler.name ?? 'crawler'}@${hash.digest('hex').slice(0, 16)}` };
}

/** `export default` as ESM gives it, or as a CommonJS module compiled by the loader wraps it once more. */
function defaultExport(loaded: unknown): unknown {
  let value = (loaded as { default?: unknown } | null)?.default;
  if (!isCrawler(value) && typeof value === 'object' && value !== null && 'default' in value) value = value.default;
  return value;
}
