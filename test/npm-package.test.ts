import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, REPO_ROOT } from './support/cli.js';
import { byHost, peakInFlight, sitesArrivalClock } from './support/politeness.js';
import { duplicates, readRecords } from './support/records.js';

const clock = sitesArrivalClock();

// The public package as a user gets it: `pnpm pack` of apps/crawlq (its
// prepack builds the bundle), installed with npm into a fresh project outside
// the workspace, then run through `npx crawlq`. Nothing of the workspace is
// linked: what the tarball lacks fails here. CI runs this file on a maintained
// LTS Node (CRAWLQ_PACKAGE_NODE, from infra/node-binary.sh); without it, on
// the Node running the tests.

const PACKAGE_DIR = join(REPO_ROOT, 'apps', 'crawlq');
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string; version: string };
const NODE = process.env.CRAWLQ_PACKAGE_NODE ?? process.execPath;
const HOSTS = ['127.0.0.41', '127.0.0.42'];
/**
 * What only the workspace's own tests, benchmarks, browser tests and build use:
 * never in a user's install. (esbuild is a dependency: it compiles a
 * TypeScript --crawler file once; so is tsx, which loads one where that
 * compiled module cannot be written.)
 */
const NOT_FOR_USERS = ['@crawlq/', 'vitest', 'playwright', 'playwright-core', 'smtp-server', 'crawlee', 'typescript', 'rollup', 'typedoc', 'eslint', 'madge', 'turbo', 'node-warc'];

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command with NODE first on PATH (npm, npx and the `crawlq` bin all run on it), without the workspace's crawlq or Redis settings. */
function run(command: string, args: readonly string[], options: { cwd: string; timeoutMs?: number; redisUrl?: string }): Promise<Run> {
  const env = cliEnv(options.redisUrl, { PATH: `${dirname(NODE)}${delimiter}${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' });
  // pnpm and npm set these for the test process: a child npm must read only its own project.
  for (const name of Object.keys(env)) if (/^npm_(package|lifecycle|config_(?!update_notifier|cache))/i.test(name)) delete env[name];
  const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let site: DemoSite;
let redis: TestRedis | undefined;
let project: string;
let tarball: string;

beforeAll(async () => {
  site = await startDemoSite({ hosts: HOSTS, pagesPerHost: 12, linksPerPage: 3, crossHostLinksPerPage: 1 });
  const root = mkdtempSync(join(tmpdir(), 'crawlq-package-'));
  let started = Date.now();
  const packed = await run('pnpm', ['pack', '--pack-destination', root], { cwd: PACKAGE_DIR, timeoutMs: 540_000 });
  expect(packed.code, packed.stderr + packed.stdout).toBe(0);
  tarball = join(root, `${manifest.name}-${manifest.version}.tgz`);
  expect(existsSync(tarball), packed.stdout).toBe(true);
  const packMs = Date.now() - started;

  // A user's project: the tarball as a dependency, Node's types for their TypeScript.
  project = join(root, 'user-project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'user-project', private: true, type: 'module', dependencies: { crawlq: `file:${tarball}` }, devDependencies: { '@types/node': '24.19.4' } }, null, 2)}\n`,
  );
  started = Date.now();
  // --prefer-offline: from npm's cache once it holds the dependencies (CI's machine keeps it), the registry otherwise.
  // A download that stalls is retried after 15 s, with at most 5 s between tries: npm's own defaults
  // wait 5 minutes for it, and stalled fetches from an empty cache have taken this whole step's time
  // (twice, on new machines). An install that still does not finish is run once more: what the first
  // one fetched is in the cache by then.
  const install = () =>
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--fetch-timeout=15000', '--fetch-retries=8', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=5000'], { cwd: project, timeoutMs: 240_000 });
  let installed = await install();
  if (installed.code !== 0) {
    process.stdout.write(`npm-package test: npm install failed (exit ${String(installed.code)}) after ${Date.now() - started} ms, once more: ${installed.stderr.slice(-500)}\n`);
    installed = await install();
  }
  expect(installed.code, installed.stderr).toBe(0);
  // Seen in CI logs: the cost of this file is mostly these two steps.
  process.stdout.write(`npm-package test: pack ${packMs} ms, npm install ${Date.now() - started} ms, node ${(await run(NODE, ['--version'], { cwd: project })).stdout.trim()}\n`);
}, 900_000);
afterAll(async () => {
  await Promise.allSettled([site?.close(), redis?.stop()]);
});

describe('the packed crawlq package, installed with npm outside the workspace', () => {
  it('installs no workspace package and none of the test, bench or browser-test tools', async () => {
    expect(existsSync(join(project, 'node_modules', '@crawlq'))).toBe(false);
    const listed = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: project });
    expect(listed.code, listed.stderr).toBe(0);
    const names = listed.stdout
      .split('\n')
      .filter((line) => line.includes('node_modules'))
      .map((line) => line.slice(line.lastIndexOf('node_modules') + 'node_modules/'.length));
    expect(names).toContain('crawlq');
    expect(names).toContain('bullmq');
    expect(names.filter((name) => NOT_FOR_USERS.some((banned) => name === banned || name.startsWith(banned)))).toEqual([]);

    const installed = JSON.parse(readFileSync(join(project, 'node_modules', 'crawlq', 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(Object.keys(installed.dependencies ?? {}).filter((name) => name.startsWith('@crawlq/'))).toEqual([]);
    // The CLI's data travels inside the bundle: nothing is read from the workspace.
    const shipped = readdirSync(join(project, 'node_modules', 'crawlq'), { recursive: true }).map(String);
    expect(shipped).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json', join('dist', 'main.js'), join('dist', 'index.js'), join('dist', 'index.d.ts')]));
    expect(shipped.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
  });

  it('runs `npx crawlq --version`', async () => {
    const result = await run('npx', ['--no-install', 'crawlq', '--version'], { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(manifest.version);
    // The library entry loads as ES modules from the user's project.
    const imported = await run(NODE, ['--input-type=module', '-e', 'console.log(Object.keys(await import(process.argv[1])).sort().join(" "))', manifest.name], { cwd: project });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout.trim()).toBe('NonRetryableError RetryableError createCrawl defineCrawler');
  });

  it('crawls a loopback site with 3 workers on its own private redis-server: every page once, the pace held at the server', { timeout: 300_000 }, async () => {
    site.resetRecords();
    // Slow answers make the concurrency cap matter as well as the rate.
    site.setFaults([{ status: 200, delayMs: 300 }]);
    const out = join(project, 'results.jsonl');
    const result = await run(
      'npx',
      ['--no-install', 'crawlq', 'crawl', ...site.seeds, '--workers', '3', '--rate', '5/1s', '--domain-concurrency', '2', '--scope', 'any', '--max-depth', '100',
        '--allow-private-network', '--out', out, '--state-dir', join(project, '.crawlq')],
      { cwd: project, timeoutMs: 240_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('crawl finished');

    const expected = site.reachable({ seeds: site.seeds, maxDepth: 100, scope: 'any' });
    const urls = readRecords(out).map((record) => record.url);
    expect(duplicates(urls)).toEqual([]);
    expect(new Set(urls)).toEqual(expected);
    const pages = site.requests.filter((request) => request.path !== '/robots.txt');
    expect(duplicates(pages.map((request) => request.url))).toEqual([]);
    for (const [host, requests] of byHost(site.requests)) {
      expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1000), host).toBeLessThanOrEqual(5);
      expect(peakInFlight(requests), host).toBeLessThanOrEqual(2);
    }
  });

  it('runs a crawler file with two routes from the package on 3 workers: every item once, a thrown error dead-lettered with its message', { timeout: 300_000 }, async () => {
    site.resetRecords();
    site.setFaults([]);
    redis ??= await startTestRedis();
    const expected = site.reachable({ seeds: site.seeds, maxDepth: 100, scope: 'any' });
    // A page that is neither a seed: its route throws after enqueueing its links, so the rest of the site is still reached.
    const failing = [...expected].filter((url) => !site.seeds.includes(url)).sort()[0] ?? '';
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'src', 'crawler.ts'), crawlerSource(failing));
    const out = join(project, 'items.jsonl');
    const namespace = 'package-crawler';
    const result = await run(
      'npx',
      ['--no-install', 'crawlq', 'crawl', ...site.seeds, '--crawler', './src/crawler.ts', '--workers', '3', '--rate', '5/1s', '--domain-concurrency', '2', '--scope', 'any',
        '--max-depth', '100', '--attempts', '2', '--backoff', '100ms', '--allow-private-network', '--out', out, '--namespace', namespace, '--state-dir', join(project, '.crawlq')],
      { cwd: project, timeoutMs: 240_000, redisUrl: redis.url },
    );
    expect(result.code, result.stderr).toBe(0);
    // Compiled once, by the installed esbuild, into the project's node_modules/.cache: what every worker imported.
    expect(readdirSync(join(project, 'node_modules', '.cache', 'crawlq')).filter((name) => name.endsWith('.mjs'))).toEqual([expect.stringMatching(/^crawler-[0-9a-f]{16}-v1\.mjs$/)]);

    const items = readRecords(out) as unknown as { url: string; title: string; route: string }[];
    expect(duplicates(items.map((item) => item.url))).toEqual([]);
    expect(new Set(items.map((item) => item.url))).toEqual(new Set([...expected].filter((url) => url !== failing)));
    // Both routes ran: the seeds through `home` (the default route, which also takes a redirect's target), linked pages through `page`.
    const home = items.filter((item) => item.route === 'home').map((item) => item.url);
    expect(home).toEqual(expect.arrayContaining(site.seeds));
    expect(items.filter((item) => item.route === 'page').length).toBeGreaterThan(expected.size / 2);
    for (const item of items) expect(item.title).toMatch(/^Page \d+ on /);
    for (const [host, requests] of byHost(site.requests)) {
      expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1000), host).toBeLessThanOrEqual(5);
      expect(peakInFlight(requests), host).toBeLessThanOrEqual(2);
    }

    const listed = await run('npx', ['--no-install', 'crawlq', 'dlq', 'list', '--json', '--namespace', namespace], { cwd: project, redisUrl: redis.url });
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout) as { url: string; reason: string; message: string; attempts: number }[];
    expect(entries).toEqual([expect.objectContaining({ url: failing, reason: 'handler', message: expect.stringContaining('no price on this page'), attempts: 2 })]);
  });

  it('types a user\'s crawler against the packed declarations: right code compiles, a wrong push field and an unknown route label fail tsc', { timeout: 300_000 }, async () => {
    const errors = await typechecked();
    // Only bad.ts fails in src/ (the README's example among the files that pass), on its two wrong lines: the unknown label (5) and the field Product lacks (6).
    expect(errors.filter((line) => line.startsWith('src/'))).toEqual([
      expect.stringMatching(/^src\/bad\.ts\(5,\d+\): error TS2322: Type '"detail"' is not assignable to type '("list"|"product"|undefined| \| )+'/),
      expect.stringMatching(/^src\/bad\.ts\(6,\d+\): error TS(2353|2561): .*'prize' does not exist in type 'Product'/),
    ]);
  });

  it('typechecks examples/ against the packed declarations, and fails on a wrong push field or an unknown route label in one', { timeout: 300_000 }, async () => {
    const errors = await typechecked();
    // The examples as they are compile; each broken copy fails on its one wrong line.
    expect(errors.filter((line) => line.startsWith('examples/'))).toEqual([]);
    expect(errors.filter((line) => line.startsWith('examples-broken/'))).toEqual([
      expect.stringMatching(/^examples-broken\/unknown-label\.ts\(\d+,\d+\): error TS(2322|2820): Type '"lists"' is not assignable to type /),
      expect.stringMatching(/^examples-broken\/wrong-field\.ts\(\d+,\d+\): error TS(2353|2561): .*'listpage' does not exist in type 'Product'/),
    ]);
  });

  it('generates the API reference in docs/api from the packed types, as committed', { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'crawlq-api-docs-'));
    // `pnpm docs:api` without its bundle step: pnpm pack has just built dist/index.d.ts.
    const generated = await run(NODE, [join(PACKAGE_DIR, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out], { cwd: PACKAGE_DIR });
    expect(generated.code, generated.stdout + generated.stderr).toBe(0);
    const tree = (dir: string) =>
      Object.fromEntries(readdirSync(dir, { recursive: true }).map(String).filter((path) => path.endsWith('.md')).sort().map((path) => [path, readFileSync(join(dir, path), 'utf8')]));
    const committed = tree(join(REPO_ROOT, 'docs', 'api'));
    expect(Object.keys(committed).length).toBeGreaterThan(0);
    // Stale docs fail here: run `pnpm docs:api` and commit docs/api.
    expect(tree(out)).toEqual(committed);
  });
});

let typecheckRun: Promise<string[]> | undefined;

/**
 * The typing cases' files, checked by one tsc run against the user's
 * node_modules: src/ (a user's crawler, right and wrong), examples/ (the
 * repository's examples as a user would have them, importing `crawlq`) and
 * examples-broken/ (two of them made wrong). One run, not one per case: each
 * run spends most of its time (20-25 s on a loaded machine) loading Node's and
 * the package's declarations, and a file's errors do not depend on the others
 * beside it. The options are the examples' (strict with
 * noUncheckedIndexedAccess): that flag only adds errors, so code it passes
 * passes plain strict too. Resolves with the error lines, in tsc's order.
 */
function typechecked(): Promise<string[]> {
  typecheckRun ??= (async () => {
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'src', 'crawler.ts'), crawlerSource('http://127.0.0.1/never'));
    // The installed package's README: its TypeScript example as a user would copy it.
    const readme = readFileSync(join(project, 'node_modules', 'crawlq', 'README.md'), 'utf8');
    const readmeExamples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    expect(readmeExamples).toHaveLength(1);
    writeFileSync(join(project, 'src', 'readme-example.ts'), readmeExamples[0] ?? '');
    writeFileSync(
      join(project, 'src', 'bad.ts'),
      [
        "import { defineCrawler } from 'crawlq';",
        'interface Product { url: string; price: number }',
        'export default defineCrawler<Product>()({',
        '  routes: {',
        "    list: async ({ enqueue }) => { await enqueue('/p/1', { label: 'detail' }); },",
        '    product: async ({ request, push }) => { await push({ url: request.url, prize: 1 }); },',
        '  },',
        "  defaultRoute: 'list',",
        '});',
        '',
      ].join('\n'),
    );
    const sources = Object.fromEntries(
      readdirSync(join(REPO_ROOT, 'examples'))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => {
          const source = readFileSync(join(REPO_ROOT, 'examples', name), 'utf8');
          const imports = source.match(/from '@crawlq\/[a-z/-]+'/g) ?? [];
          expect(imports, name).toEqual(["from '@crawlq/crawler/api'"]);
          return [name, source.replace("from '@crawlq/crawler/api'", "from 'crawlq'")];
        }),
    );
    expect(Object.keys(sources).sort()).toEqual(['catalogue-to-postgres.ts', 'docs-search-index.ts', 'news-archive.ts']);
    const catalogue = sources['catalogue-to-postgres.ts'] ?? '';
    const broken = { 'wrong-field.ts': catalogue.replace('price, listPage:', 'price, listpage:'), 'unknown-label.ts': catalogue.replace("{ label: 'list' }", "{ label: 'lists' }") };
    for (const source of Object.values(broken)) expect(source).not.toBe(catalogue);
    for (const [dir, files] of [['examples', sources], ['examples-broken', broken]] as const) {
      mkdirSync(join(project, dir), { recursive: true });
      for (const [name, source] of Object.entries(files)) writeFileSync(join(project, dir, name), source);
    }
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, noEmit: true, types: ['node'] },
        include: ['src', 'examples', 'examples-broken'],
      }),
    );
    // The workspace's compiler; what it checks against comes from the user's node_modules.
    const checked = await run(NODE, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { cwd: project });
    const errors = checked.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    // Errors, and only in the three places the cases look at.
    expect(checked.code, checked.stdout + checked.stderr).not.toBe(0);
    expect(errors.filter((line) => !/^(src|examples|examples-broken)\//.test(line))).toEqual([]);
    return errors;
  })();
  return typecheckRun;
}

/** A user's crawler with two routes (TypeScript, loaded by the package without a build step). */
function crawlerSource(failingUrl: string): string {
  return [
    "import { defineCrawler } from 'crawlq';",
    '',
    'interface PageItem { url: string; title: string; route: string }',
    '',
    'export default defineCrawler<PageItem>()({',
    "  name: 'package-e2e',",
    '  routes: {',
    '    home: async ({ $, request, push, enqueue }) => {',
    "      await push({ url: request.url, title: $('title').text(), route: 'home' });",
    "      await enqueue($('ul.links a').map((_, a) => $(a).attr('href')).get(), { label: 'page' });",
    '    },',
    '    page: async ({ $, request, push, enqueue }) => {',
    "      await enqueue($('ul.links a').map((_, a) => $(a).attr('href')).get(), { label: 'page' });",
    `      if (request.url === ${JSON.stringify(failingUrl)}) throw new Error('no price on this page');`,
    "      await push({ url: request.url, title: $('title').text(), route: 'page' });",
    '    },',
    '  },',
    "  defaultRoute: 'home',",
    '});',
    '',
  ].join('\n');
}
