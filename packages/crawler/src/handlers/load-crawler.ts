import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, extname, relative, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from '@crawlq/config';
import type { Crawler } from './crawler-types.js';
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
 * Loads `--crawler FILE`: TypeScript through tsx's loader (no build step;
 * Node 20 strips no types itself), JavaScript as it is. Its default export
 * must be a `defineCrawler()` crawler.
 * @throws ConfigError (exit code 2) for a missing file, a module that fails to load, or a wrong export
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
 * A TypeScript crawler takes seconds to load on a busy machine; a worker that
 * `crawl` starts ahead loads it while it waits for the word to start.
 */
export function preloadCrawler(path: string): void {
  loadCrawler(path).catch(() => undefined);
}

const LOADING = new Map<string, Promise<LoadedCrawler>>();

async function loadCrawlerFile(path: string, file: string): Promise<LoadedCrawler> {
  if (!existsSync(file)) throw new ConfigError('--crawler', `${path}: no such file`);
  const local = new Set<string>([file]);
  let loaded: unknown;
  try {
    const url = pathToFileURL(file).href;
    if (TYPESCRIPT.has(extname(file))) {
      const { tsImport } = await import('tsx/esm/api');
      loaded = await tsImport(url, {
        parentURL: import.meta.url,
        onImport: (imported) => {
          // The user's own files (not packages) make the crawler's hash.
          if (imported.startsWith('file:') && !imported.includes('/node_modules/')) local.add(fileURLToPath(imported.split('?')[0] ?? imported));
        },
      });
    } else {
      loaded = await import(url);
    }
  } catch (error) {
    throw new ConfigError('--crawler', `${path} failed to load: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, { cause: error });
  }
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
  return { crawler, identity: `${name}@${hashFiles(dirname(file), [...local])}` };
}

/** A crawler given as an object (createCrawl): named by its name and a hash of its functions' source. */
export function inlineCrawler(crawler: Crawler): LoadedCrawler {
  const hash = createHash('sha256');
  for (const [label, handler] of Object.entries(crawler.routes).sort(([a], [b]) => a.localeCompare(b))) hash.update(`${label}\0${String(handler)}\0`);
  for (const hook of [crawler.beforeRequest, crawler.afterResponse, crawler.onFailure]) hash.update(`${String(hook)}\0`);
  hash.update(crawler.defaultRoute);
  return { crawler, identity: `${crawler.name ?? 'crawler'}@${hash.digest('hex').slice(0, 16)}` };
}

/** Every file by its path from the crawler's directory and its bytes: the same code anywhere hashes the same. */
function hashFiles(root: string, files: readonly string[]): string {
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

/** `export default` as ESM gives it, or as a CommonJS module compiled by the loader wraps it once more. */
function defaultExport(loaded: unknown): unknown {
  let value = (loaded as { default?: unknown } | null)?.default;
  if (!isCrawler(value) && typeof value === 'object' && value !== null && 'default' in value) value = value.default;
  return value;
}
