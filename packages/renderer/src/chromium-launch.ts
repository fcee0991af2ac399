import { accessSync, constants } from 'node:fs';

/** Where a system Chromium usually is: Debian's package, other Linux packages, Homebrew's cask. Nothing is ever downloaded. */
const KNOWN_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/Applications/Chromium.app/Contents/MacOS/Chromium'];

/**
 * Flags every browser starts with. A fresh, empty profile directory comes from
 * playwright-core itself (it passes its own temporary --user-data-dir). The
 * rest stop Chromium from calling home (updates, sync, field trials, QUIC
 * probes): a crawler's browser talks only to the pages it is given, and all
 * of that goes through crawlq's gate anyway. --no-sandbox: workers often run
 * as root in containers, where Chromium's sandbox refuses to start.
 */
export const CHROMIUM_ARGS: readonly string[] = [
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
  // Chromium keeps a renderer process started ahead for the next site (about
  // 90 MB); a crawler's every page is such a navigation, and the memory cap counts it.
  '--disable-features=SpareRendererForSitePerProcess',
];

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
