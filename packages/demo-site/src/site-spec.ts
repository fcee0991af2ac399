import { isIPv4 } from 'node:net';
import { DemoSiteConfigError } from './errors.js';
import type { FaultRule } from './fault-rules.js';
import { resolveHostLoad, type HostLoad } from './host-load.js';

/** A path that answers late, on every host of the site. */
export interface SlowPage {
  /** Exact request path, e.g. `/p/3` or `/`. */
  readonly path: string;
  /** How long to wait before answering. */
  readonly delayMs: number;
}

/** What to generate and serve. Everything derives from these fields, so one spec is one site. */
export interface SiteSpec {
  /**
   * IPv4 loopback addresses to serve (`127.0.0.0/8`), e.g. `['127.0.0.2', '127.0.0.3']`.
   * Each host is one "domain" of the site. Linux routes all of `127.0.0.0/8` to `lo`,
   * so no setup is needed.
   */
  readonly hosts: readonly string[];
  /** Pages per host: page 0 is `/`, the others `/p/<n>`. */
  readonly pagesPerHost: number;
  /**
   * Links per page to pages of the same host. The first always points to the
   * next page (`n + 1`, the last page back to page 0), so every page is
   * reachable from page 0; the others go to pseudo-random pages (repeats and
   * self-links included, spelled in varied relative and absolute forms).
   */
  readonly linksPerPage: number;
  /** Links per page to random pages of the *other* hosts (none when there is only one host). @default 0 */
  readonly crossHostLinksPerPage?: number;
  /** Links per page to `/missing/<n>` on the same host, which answer 404. @default 0 */
  readonly brokenLinksPerPage?: number;
  /** Paths that answer after a delay, on every host. @default [] */
  readonly slowPages?: readonly SlowPage[];
  /** Seed of the pseudo-random link graph: same seed, same site. @default 1 */
  readonly seed?: number;
  /**
   * The port every host listens on (URLs then differ only by host).
   * @default 0 (any free port, the same on every host)
   */
  readonly port?: number;
  /** Approximate size of each page's HTML in bytes (a padding paragraph fills it up). @default 2000 */
  readonly pageBytes?: number;
  /** Faults to inject from the start (see {@link FaultRule}). @default [] */
  readonly faults?: readonly FaultRule[];
  /** `robots.txt` bodies by host; hosts without one answer 404 for `/robots.txt`. @default {} */
  readonly robotsTxt?: Readonly<Record<string, string>>;
  /**
   * How hosts answer under load (latency growing with requests in flight,
   * shedding load above a rate), by host; every request to the host counts,
   * robots.txt included. A fault rule that applies decides instead. @default {}
   */
  readonly load?: Readonly<Record<string, HostLoad>>;
}

/** A validated spec with every default filled in. */
export interface ResolvedSiteSpec {
  readonly hosts: readonly string[];
  readonly pagesPerHost: number;
  readonly linksPerPage: number;
  readonly crossHostLinksPerPage: number;
  readonly brokenLinksPerPage: number;
  readonly slowPages: ReadonlyMap<string, number>;
  readonly seed: number;
  readonly port: number;
  readonly pageBytes: number;
  readonly faults: readonly FaultRule[];
  readonly robotsTxt: ReadonlyMap<string, string>;
  readonly load: ReadonlyMap<string, HostLoad>;
}

/** @default 2000 (see {@link SiteSpec.pageBytes}) */
export const DEFAULT_PAGE_BYTES = 2000;

/**
 * Checks a spec and fills in the defaults.
 * @throws {DemoSiteConfigError} naming the first field that cannot work
 */
export function resolveSiteSpec(spec: SiteSpec): ResolvedSiteSpec {
  const hosts: readonly string[] = spec.hosts;
  // The type says array, but plain JavaScript callers (the CLI) may pass anything.
  const isArray: (value: unknown) => boolean = Array.isArray;
  if (!isArray(hosts) || hosts.length === 0) {
    throw new DemoSiteConfigError('hosts', 'needs at least one loopback address');
  }
  const seen = new Set<string>();
  hosts.forEach((host, index) => {
    // Loopback only: the site must never be reachable from outside the machine.
    if (typeof host !== 'string' || !isIPv4(host) || !host.startsWith('127.')) {
      throw new DemoSiteConfigError(`hosts[${index}]`, `${String(host)} is not an IPv4 loopback address (127.0.0.0/8)`);
    }
    if (seen.has(host)) throw new DemoSiteConfigError(`hosts[${index}]`, `${host} is listed twice`);
    seen.add(host);
  });
  const slowPages = new Map<string, number>();
  (spec.slowPages ?? []).forEach((slow, index) => {
    if (typeof slow.path !== 'string' || !slow.path.startsWith('/')) {
      throw new DemoSiteConfigError(`slowPages[${index}].path`, 'must be a path starting with /');
    }
    if (!Number.isFinite(slow.delayMs) || slow.delayMs < 0) {
      throw new DemoSiteConfigError(`slowPages[${index}].delayMs`, `must be a non-negative number, got ${String(slow.delayMs)}`);
    }
    slowPages.set(slow.path, slow.delayMs);
  });
  const robotsTxt = new Map<string, string>();
  for (const [host, body] of Object.entries(spec.robotsTxt ?? {})) {
    if (!seen.has(host)) throw new DemoSiteConfigError(`robotsTxt.${host}`, `${host} is not one of the site's hosts`);
    if (typeof body !== 'string') throw new DemoSiteConfigError(`robotsTxt.${host}`, 'must be a string');
    robotsTxt.set(host, body);
  }
  return {
    hosts: [...hosts],
    pagesPerHost: integer(spec.pagesPerHost, 'pagesPerHost', { min: 1 }),
    linksPerPage: integer(spec.linksPerPage, 'linksPerPage', { min: 0 }),
    crossHostLinksPerPage: integer(spec.crossHostLinksPerPage ?? 0, 'crossHostLinksPerPage', { min: 0 }),
    brokenLinksPerPage: integer(spec.brokenLinksPerPage ?? 0, 'brokenLinksPerPage', { min: 0 }),
    slowPages,
    seed: integer(spec.seed ?? 1, 'seed', { min: Number.MIN_SAFE_INTEGER }),
    port: integer(spec.port ?? 0, 'port', { min: 0, max: 65_535 }),
    pageBytes: integer(spec.pageBytes ?? DEFAULT_PAGE_BYTES, 'pageBytes', { min: 0 }),
    faults: spec.faults === undefined ? [] : [...spec.faults],
    robotsTxt,
    load: resolveHostLoad(spec.load, seen),
  };
}

function integer(value: number, field: string, range: { min: number; max?: number }): number {
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(value) || value < range.min || value > max) {
    throw new DemoSiteConfigError(field, `must be an integer from ${range.min} to ${max}, got ${String(value)}`);
  }
  return value;
}
