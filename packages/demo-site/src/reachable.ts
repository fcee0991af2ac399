import { DemoSiteConfigError } from './errors.js';
import type { SiteGraph } from './site-graph.js';

/** Which crawl {@link computeReachable} predicts. */
export interface ReachableOptions {
  /** Start URLs; each must be on one of the site's hosts and its port. */
  readonly seeds: readonly string[];
  /** Links are followed from pages up to this depth (seeds are depth 0); `Infinity` for no limit. */
  readonly maxDepth: number;
  /**
   * `'host'`: only URLs on the hosts of the given seeds (any of them);
   * `'any'`: every host of the site.
   */
  readonly scope: 'host' | 'any';
}

interface Visit {
  readonly host: number;
  // Undefined for URLs without links (404s, robots.txt...).
  readonly page: number | undefined;
}

/**
 * Ground truth for a crawl: every URL a breadth-first crawl from `seeds`
 * fetches, i.e. every URL whose shortest link distance from a seed is at most
 * `maxDepth` and that is in scope, including the broken links it fetches
 * (they answer 404). URLs are canonical: no fragment, lower-case scheme,
 * dot segments resolved. `/robots.txt` is not included.
 *
 * A crawler that records the depth at which it *first* saw a URL and does not
 * crawl in breadth-first order may see a URL first at a larger depth and then
 * fetch fewer URLs than this.
 *
 * @throws {DemoSiteConfigError} for a seed that is not a URL of the site or a negative `maxDepth`
 */
export function computeReachable(graph: SiteGraph, options: ReachableOptions): Set<string> {
  if (Number.isNaN(options.maxDepth) || options.maxDepth < 0) {
    throw new DemoSiteConfigError('maxDepth', `must be a non-negative number or Infinity, got ${String(options.maxDepth)}`);
  }
  if (options.scope !== 'host' && options.scope !== 'any') {
    throw new DemoSiteConfigError('scope', `must be 'host' or 'any', got ${String(options.scope)}`);
  }
  const seen = new Set<string>();
  const inScope = new Set<number>();
  let level: Visit[] = [];
  options.seeds.forEach((seed, index) => {
    const located = locate(graph, seed);
    if (located === undefined) {
      throw new DemoSiteConfigError(`seeds[${index}]`, `${seed} is not a URL of this site`);
    }
    inScope.add(located.host);
    if (seen.has(located.url)) return;
    seen.add(located.url);
    level.push(located);
  });
  for (let depth = 0; depth < options.maxDepth && level.length > 0; depth += 1) {
    const next: Visit[] = [];
    for (const visit of level) {
      if (visit.page === undefined) continue;
      for (const { target } of graph.linksOf(visit.host, visit.page)) {
        if (options.scope === 'host' && !inScope.has(target.host)) continue;
        const url = graph.urlOf(target);
        if (seen.has(url)) continue;
        seen.add(url);
        next.push({ host: target.host, page: target.kind === 'page' ? target.page : undefined });
      }
    }
    level = next;
  }
  return seen;
}

function locate(graph: SiteGraph, seed: string): (Visit & { url: string }) | undefined {
  let url: URL;
  try {
    url = new URL(seed);
  } catch {
    return undefined;
  }
  const host = graph.hostIndexOf(url.hostname);
  const port = url.port === '' ? 80 : Number(url.port);
  if (url.protocol !== 'http:' || host === undefined || port !== graph.layout.port) return undefined;
  url.hash = '';
  return { host, page: graph.pageOfPath(url.pathname), url: url.href };
}
