import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cachedCrawler, compileCrawler, crawlerCacheDir } from '../../src/handlers/crawler-cache.js';
import { loadCrawler } from '../../src/handlers/load-crawler.js';
import type { CrawlContext } from '../../src/api.js';

// `--crawler FILE` as a worker loads it: TypeScript compiled once into
// node_modules/.cache/crawlq and imported from there, JavaScript as it is.
// The crawler files import the API by its source path, so the compiled module
// holds it and loads without a build of this package.
const API = fileURLToPath(new URL('../../src/api.ts', import.meta.url));
const ERRORS_BUILT = new URL('../../../errors/dist/index.js', import.meta.url).href;

/** A project folder with a node_modules (where the cache goes) and a two-file TypeScript crawler. */
function project(): { dir: string; crawler: string; routes: string } {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-load-crawler-'));
  // The API's source imports the workspace's error base, which stays a package
  // import in the compiled module: the project has it (its built output, as
  // Node loads it), as a user's project has crawlq.
  const errors = join(dir, 'node_modules', '@crawlq', 'errors');
  mkdirSync(errors, { recursive: true });
  writeFileSync(join(errors, 'package.json'), JSON.stringify({ name: '@crawlq/errors', type: 'module', exports: './index.js' }));
  writeFileSync(join(errors, 'index.js'), `export * from ${JSON.stringify(ERRORS_BUILT)};\n`);
  mkdirSync(join(dir, 'src'));
  const routes = join(dir, 'src', 'routes.ts');
  writeFileSync(routes, ['export const TITLE: string = "one";', 'export const HERE: string = import.meta.url;', ''].join('\n'));
  const crawler = join(dir, 'src', 'crawler.ts');
  writeFileSync(
    crawler,
    [
      `import { defineCrawler, type CrawlContext } from ${JSON.stringify(API)};`,
      "import { TITLE, HERE } from './routes.js';",
      'export default defineCrawler({',
      "  name: 'cached',",
      '  routes: { page: async ({ push }: CrawlContext) => push({ title: TITLE, here: HERE, own: import.meta.url }) },',
      "  defaultRoute: 'page',",
      '});',
      '',
    ].join('\n'),
  );
  return { dir, crawler, routes };
}

/** What the crawler's one route pushes. */
async function pushed(crawler: Awaited<ReturnType<typeof loadCrawler>>['crawler']): Promise<object[]> {
  const items: object[] = [];
  const route = crawler.routes[crawler.defaultRoute];
  await route?.({ push: (item: object) => Promise.resolve(void items.push(item)) } as unknown as CrawlContext);
  return items;
}

describe('loading a --crawler module', () => {
  it('a TypeScript crawler is compiled into node_modules/.cache/crawlq and runs from there, its files still knowing where they are', async () => {
    const { dir, crawler, routes } = project();
    expect(crawlerCacheDir(crawler)).toBe(join(dir, 'node_modules', '.cache', 'crawlq'));
    const loaded = await loadCrawler(crawler);
    expect(loaded.identity).toMatch(/^cached@[0-9a-f]{16}$/);
    const compiled = readdirSync(join(dir, 'node_modules', '.cache', 'crawlq'));
    expect(compiled.filter((name) => name.endsWith('.mjs'))).toEqual([`crawler-${loaded.identity.split('@')[1]}-v1.mjs`]);
    // import.meta.url names each source file, not the compiled module.
    expect(await pushed(loaded.crawler)).toEqual([{ title: 'one', here: pathToFileURL(routes).href, own: pathToFileURL(crawler).href }]);
  });

  it('the compiled module is found again by the hash of its files, and compiled again once a file it imports changes', async () => {
    const { crawler, routes } = project();
    expect(cachedCrawler(crawler)).toBeUndefined();
    const first = await compileCrawler(crawler);
    expect(first).toBeDefined();
    const modulePath = fileURLToPath(first?.url ?? '');
    const written = readFileSync(modulePath, 'utf8');
    // Found without esbuild, the same module and hash.
    expect(cachedCrawler(crawler)).toEqual(first);
    // A change in the imported file (not the entry) makes the cache stale: another hash, another module.
    writeFileSync(routes, readFileSync(routes, 'utf8').replace('"one"', '"two"'));
    expect(cachedCrawler(crawler)).toBeUndefined();
    const second = await compileCrawler(crawler);
    expect(second?.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(second?.hash).not.toBe(first?.hash);
    expect(cachedCrawler(crawler)).toEqual(second);
    // The first one is left as it was (a worker of a running crawl may still import it).
    expect(readFileSync(modulePath, 'utf8')).toBe(written);
    // And the loaded crawler's identity is the hash of what it runs.
    const loaded = await loadCrawler(crawler);
    expect(loaded.identity).toBe(`cached@${second?.hash}`);
    expect(await pushed(loaded.crawler)).toMatchObject([{ title: 'two' }]);
  });

  it('a syntax error is one line naming the file, line and column, and nothing is cached', async () => {
    const { dir, crawler } = project();
    const broken = join(dir, 'src', 'broken.ts');
    writeFileSync(broken, readFileSync(crawler, 'utf8').replace("defaultRoute: 'page',", "defaultRoute: 'page' 'extra',"));
    const error = await loadCrawler(broken).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/^--crawler: .*broken\.ts failed to compile: .*src\/broken\.ts:6:\d+: Expected "}" but found "'extra'"$/);
    expect(existsSync(join(dir, 'node_modules', '.cache', 'crawlq')) ? readdirSync(join(dir, 'node_modules', '.cache', 'crawlq')).filter((name) => name.startsWith('broken')) : []).toEqual([]);
  });

  it('with no node_modules above it (no cache to write), a TypeScript crawler is loaded through tsx as before, under the same kind of name', async () => {
    const { dir } = project();
    const alone = mkdtempSync(join(tmpdir(), 'crawlq-no-modules-'));
    expect(crawlerCacheDir(join(alone, 'crawler.ts'))).toBeUndefined();
    mkdirSync(join(alone, 'src'));
    for (const name of ['crawler.ts', 'routes.ts']) writeFileSync(join(alone, 'src', name), readFileSync(join(dir, 'src', name)));
    const loaded = await loadCrawler(join(alone, 'src', 'crawler.ts'));
    expect(loaded.identity).toMatch(/^cached@[0-9a-f]{16}$/);
    // tsx's loader adds a query of its own to each module's URL.
    const [item] = (await pushed(loaded.crawler)) as { title: string; here: string }[];
    expect(item?.title).toBe('one');
    expect(item?.here.startsWith(pathToFileURL(join(alone, 'src', 'routes.ts')).href)).toBe(true);
  });

  it('a JavaScript crawler is imported as it is: nothing compiled, named by its hash all the same', async () => {
    const { dir } = project();
    const crawler = join(dir, 'src', 'plain.mjs');
    writeFileSync(
      crawler,
      [
        `import { defineCrawler } from ${JSON.stringify(pathToFileURL(API).href)};`,
        "export default defineCrawler({ routes: { page: async ({ push }) => push({ own: import.meta.url }) }, defaultRoute: 'page' });",
        '',
      ].join('\n'),
    );
    const loaded = await loadCrawler(crawler);
    expect(loaded.identity).toMatch(/^plain@[0-9a-f]{16}$/);
    expect(await pushed(loaded.crawler)).toEqual([{ own: pathToFileURL(crawler).href }]);
    expect(existsSync(join(dir, 'node_modules', '.cache', 'crawlq'))).toBe(false);
  });
});
