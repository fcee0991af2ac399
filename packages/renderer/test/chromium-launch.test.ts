import { readFileSync } from 'node:fs';
import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool, CHROMIUM_FLAGS, CRAWLQ_DISABLED_FEATURES, PLAYWRIGHT_DISABLED_FEATURES } from '../src/index.js';
import { childPids, treePids } from '../src/process-tree.js';
import { chromium } from './browser-support.js';

// What Chromium is started with, read off the running processes' command
// lines: Chromium keeps only the last --disable-features, so a second one
// would quietly undo Playwright's list; and the renderer processes a pool's
// tabs cost.

let site: SpaSite;

beforeAll(async () => {
  site = await startSpaSite({ appHost: '127.0.0.91', scriptHost: '127.0.0.92', staticHost: '127.0.0.93' });
});
afterAll(async () => {
  await site?.close();
});

/** A process' arguments. Chromium's helpers rewrite theirs as one string (their process title): split at spaces too. */
function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .flatMap((arg) => (arg.includes(' --') ? arg.split(' ') : [arg]))
      .filter((arg) => arg !== '');
  } catch {
    return [];
  }
}

/** The processes under `root`, root included, each with its command line. */
function tree(root: number): { pid: number; argv: string[] }[] {
  return treePids(root).map((pid) => ({ pid, argv: commandLine(pid) })).filter((entry) => entry.argv.length > 0);
}

/** The browser process of a tree: the Chromium that is no helper (`--type=`) of another. */
function browserArgv(root: number): string[] {
  const browser = tree(root).find(({ argv }) => argv.some((arg) => arg.startsWith('--remote-debugging-pipe')) && !argv.some((arg) => arg.startsWith('--type=')));
  if (!browser) throw new Error(`no browser process under pid ${root}`);
  return browser.argv;
}

function disabledFeatures(argv: readonly string[]): string[][] {
  return argv.filter((arg) => arg.startsWith('--disable-features=')).map((arg) => arg.slice('--disable-features='.length).split(','));
}

describe.skipIf(chromium === undefined)("Chromium's command line", () => {
  it("PLAYWRIGHT_DISABLED_FEATURES is playwright-core's own switch, which the launch replaces by one holding both lists", { timeout: 120_000 }, async () => {
    const { chromium: launcher } = await import('playwright-core');
    const before = new Set(childPids(process.pid));
    const plain = await launcher.launch({ executablePath: chromium!, headless: true, chromiumSandbox: false });
    try {
      const root = childPids(process.pid).find((pid) => !before.has(pid));
      expect(root).toBeDefined();
      // Without crawlq's flags: Playwright's one switch, exactly the list crawlq copies (an upgrade that changes it fails here).
      expect(disabledFeatures(browserArgv(root!))).toEqual([[...PLAYWRIGHT_DISABLED_FEATURES]]);
    } finally {
      await plain.close();
    }

    const pool = new BrowserPool({ pages: 1, restartAfterPages: 100, maxMemoryBytes: 2 ** 31 });
    try {
      await pool.withTab(() => Promise.resolve(), (tab) => tab.page.evaluate('1'));
      const [root] = pool.pids;
      expect(root).toBeDefined();
      const switches = disabledFeatures(browserArgv(root!));
      expect(switches).toHaveLength(1);
      expect(new Set(switches[0])).toEqual(new Set([...PLAYWRIGHT_DISABLED_FEATURES, ...CRAWLQ_DISABLED_FEATURES]));
      expect(CHROMIUM_FLAGS.ignoreDefaultArgs).toEqual([`--disable-features=${PLAYWRIGHT_DISABLED_FEATURES.join(',')}`]);
    } finally {
      await pool.close();
    }
  });

  it('three tabs with a page each run three renderer processes (no address-bar drop-down per context, no spare)', { timeout: 120_000 }, async () => {
    const pool = new BrowserPool({ pages: 3, restartAfterPages: 100, maxMemoryBytes: 2 ** 31 });
    try {
      let arrived = 0;
      let releaseAll: () => void = () => undefined;
      const allOpen = new Promise<void>((resolve) => (releaseAll = resolve));
      const renderers = new Promise<number>((resolve) => {
        const open = async (url: string) =>
          pool.withTab(
            () => Promise.resolve(),
            async (tab) => {
              tab.handler = (route) => route.continue();
              await tab.page.goto(url);
              arrived += 1;
              if (arrived === 3) {
                const [root] = pool.pids;
                resolve(tree(root!).filter(({ argv }) => argv.includes('--type=renderer')).length);
                releaseAll();
              }
              // Each tab keeps its page until all three have theirs: they are counted side by side.
              await allOpen;
            },
          );
        void Promise.all(site.appUrls.slice(0, 3).map(open)).catch(() => {
          resolve(-1);
          releaseAll();
        });
      });
      expect(await renderers).toBe(3);
    } finally {
      await pool.close();
    }
  });
});
