/** What an independent breadth-first crawl over real HTTP saw. */
export interface HttpCrawl {
  /** Every URL fetched (canonical: fragment removed, as WHATWG URL spells it). */
  readonly fetched: Set<string>;
  /** Status of every fetched URL. */
  readonly statuses: Map<string, number>;
}

const HREF = /<a\s[^>]*href="([^"]*)"/g;

/**
 * A deliberately naive crawler used as the reference for `reachable()`: it
 * knows nothing about the site's generator, only HTML and URL resolution.
 * Every URL at depth <= maxDepth is fetched; links are followed from 200 pages
 * below maxDepth.
 */
export async function crawlOverHttp(options: {
  seeds: readonly string[];
  maxDepth: number;
  scope: 'host' | 'any';
}): Promise<HttpCrawl> {
  const allowedHosts = new Set(options.seeds.map((seed) => new URL(seed).host));
  const fetched = new Set<string>();
  const statuses = new Map<string, number>();
  let level = [...new Set(options.seeds.map(canonical))];
  level.forEach((url) => fetched.add(url));
  for (let depth = 0; level.length > 0; depth += 1) {
    const pages = await Promise.all(
      level.map(async (url) => {
        const response = await fetch(url);
        return { url, status: response.status, html: await response.text() };
      }),
    );
    const next: string[] = [];
    for (const page of pages) {
      statuses.set(page.url, page.status);
      if (depth >= options.maxDepth || page.status !== 200) continue;
      for (const match of page.html.matchAll(HREF)) {
        const target = new URL(match[1] ?? '', page.url);
        if (target.protocol !== 'http:' && target.protocol !== 'https:') continue;
        target.hash = '';
        if (options.scope === 'host' && !allowedHosts.has(target.host)) continue;
        if (fetched.has(target.href)) continue;
        fetched.add(target.href);
        next.push(target.href);
      }
    }
    level = next;
  }
  return { fetched, statuses };
}

function canonical(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}
