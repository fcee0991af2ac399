import { accessSync, constants } from 'node:fs';

/** Where a system Chromium usually is: Debian's package, other Linux packages, Homebrew's cask. Nothing is ever downloaded. */
const KNOWN_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/Applications/Chromium.app/Contents/MacOS/Chromium'];

/**
 * The value playwright-core (the version this package pins) passes as its own
 * `--disable-features`. Chromium keeps only the last `--disable-features` it
 * is given, so a second one would silently switch all of these back on
 * (among them HTTPS upgrades and CORS redirect restarts, which break routed
 * requests): crawlq's launch drops Playwright's switch and passes one that
 * holds both lists. A test reads Playwright's real switch off a launched
 * browser's command line, so an upgrade that changes it fails there.
 */
export const PLAYWRIGHT_DISABLED_FEATURES: readonly string[] = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Chromium features crawlq turns off for memory: each is a renderer process
 * no page asked for, and the pool's memory cap counts them all.
 * - A renderer started ahead for the next site (about 90 MB): a crawler's
 *   every page is such a navigation.
 * - The address bar's drop-down, a web page of its own in a renderer of its
 *   own for every browser context (a headless browser shows no address bar):
 *   4 contexts ran 8 renderers with it and 4 without, about 120 MB less.
 */
export const CRAWLQ_DISABLED_FEATURES: readonly string[] = ['SpareRendererForSitePerProcess', 'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup'];

/** How crawlq starts Chromium through playwright-core: its `args`, and the one default switch it replaces (`ignoreDefaultArgs`). */
export interface ChromiumFlags {
  readonly args: readonly string[];
  readonly ignoreDefaultArgs: readonly string[];
}

/**
 * Flags every browser starts with. A fresh, empty profile directory comes from
 * playwright-core itself (it passes its own temporary --user-data-dir). The
 * rest stop Chromium from calling home (updates, sync, field trials, QUIC
 * probes): a crawler's browser talks only to the pages it is given, and all
 * of that goes through crawlq's gate anyway. --no-sandbox: workers often run
 * as root in containers, where Chromium's sandbox refuses to start.
 */
export const CHROMIUM_FLAGS: ChromiumFlags = Object.freeze({
  args: Object.freeze([
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--disable-dev-shm-usage',
    '--mute-audio',
    `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...CRAWLQ_DISABLED_FEATURES].join(',')}`,
  ]),
  ignoreDefaultArgs: Object.freeze([`--disable-features=${PLAYWRIGHT_DISABLED_FEATURES.join(',')}`]),
});

/** The configured Chromium, or the first system one found; undefined when there is none. */
export function findChromium(configured?: string): string | undefined {
  const candidates = configured === undefined ? KNOWN_PATHS : [configured];
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
