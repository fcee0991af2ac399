import { createSeededRandom, mixSeed } from './seeded-random.js';

/** A URL of the site as a node of its link graph. */
export type SiteTarget =
  | { readonly kind: 'page'; readonly host: number; readonly page: number }
  | { readonly kind: 'missing'; readonly host: number; readonly n: number };

/** One `<a href>` of a page: where it leads and which spelling of the URL the HTML uses. */
export interface PlannedLink {
  readonly target: SiteTarget;
  readonly form: LinkForm;
}

/**
 * Spellings of a link, so that URL normalisation gets exercised: the same
 * target appears relative, absolute, with fragments and with an upper-case
 * scheme, and must dedupe to one URL.
 */
export type LinkForm =
  | 'absolute' // http://127.0.0.2:PORT/p/7
  | 'root-relative' // /p/7
  | 'document-relative' // p/7 from /, 7 from /p/3, ../ to page 0 from /p/3
  | 'dot-relative' // ./p/7 from /, ../p/7 from /p/3
  | 'fragment' // /p/7#part-2
  | 'upper-scheme' // HTTP://127.0.0.2:PORT/p/7#top
  | 'protocol-relative'; // //127.0.0.3:PORT/p/7

const SAME_HOST_FORMS: readonly LinkForm[] = [
  'absolute',
  'root-relative',
  'document-relative',
  'dot-relative',
  'fragment',
  'upper-scheme',
];
// Links to another host must carry the host.
const CROSS_HOST_FORMS: readonly LinkForm[] = ['absolute', 'protocol-relative', 'upper-scheme'];

/** The shape of the link graph; all of it derives from these numbers. */
export interface SiteLayout {
  readonly hosts: readonly string[];
  readonly port: number;
  readonly pagesPerHost: number;
  readonly linksPerPage: number;
  readonly crossHostLinksPerPage: number;
  readonly brokenLinksPerPage: number;
  readonly seed: number;
}

const PAGE_PATH = /^\/p\/([1-9][0-9]{0,15})$/;

/**
 * The site's pages and links, computed on demand: the links of a page come
 * from a generator seeded with (seed, host, page), so any page can be built
 * alone and the server and the ground truth always agree.
 */
export class SiteGraph {
  readonly layout: SiteLayout;
  /** `http://HOST:PORT` for each host, in the order of `layout.hosts`. */
  readonly origins: readonly string[];
  readonly #hostIndex: ReadonlyMap<string, number>;

  constructor(layout: SiteLayout) {
    this.layout = layout;
    // As the WHATWG URL serialiser does: the default port is left out.
    this.origins = layout.hosts.map((host) => (layout.port === 80 ? `http://${host}` : `http://${host}:${layout.port}`));
    this.#hostIndex = new Map(layout.hosts.map((host, index) => [host, index]));
  }

  /** Position of `host` in `layout.hosts`, if it is one of the site's hosts. */
  hostIndexOf(host: string): number | undefined {
    return this.#hostIndex.get(host);
  }

  /** The page a request path names: `/` is page 0, `/p/<n>` page n (1 ≤ n < pagesPerHost). */
  pageOfPath(pathname: string): number | undefined {
    if (pathname === '/') return 0;
    const match = PAGE_PATH.exec(pathname);
    if (match?.[1] === undefined) return undefined;
    const page = Number(match[1]);
    return page < this.layout.pagesPerHost ? page : undefined;
  }

  /** Path of a target, e.g. `/`, `/p/7` or `/missing/3`. */
  pathOf(target: SiteTarget): string {
    if (target.kind === 'missing') return `/missing/${target.n}`;
    return target.page === 0 ? '/' : `/p/${target.page}`;
  }

  /** Canonical absolute URL of a target (as `new URL(...).href` spells it). */
  urlOf(target: SiteTarget): string {
    return `${this.#origin(target.host)}${this.pathOf(target)}`;
  }

  /**
   * The links of a page, in document order: `linksPerPage` to the same host
   * (the first to the next page, so page 0 reaches them all), then
   * `crossHostLinksPerPage` to other hosts, then `brokenLinksPerPage` to
   * `/missing/<n>`.
   */
  linksOf(host: number, page: number): PlannedLink[] {
    const { hosts, pagesPerHost, linksPerPage, crossHostLinksPerPage, brokenLinksPerPage, seed } = this.layout;
    const random = createSeededRandom(mixSeed([seed, host, page]));
    const pick = (count: number): number => Math.floor(random() * count);
    const links: PlannedLink[] = [];
    for (let index = 0; index < linksPerPage; index += 1) {
      const to = index === 0 ? (page + 1) % pagesPerHost : pick(pagesPerHost);
      links.push({ target: { kind: 'page', host, page: to }, form: formAt(SAME_HOST_FORMS, pick) });
    }
    // With a single host there is nowhere else to link to.
    if (hosts.length > 1) {
      for (let index = 0; index < crossHostLinksPerPage; index += 1) {
        const other = (host + 1 + pick(hosts.length - 1)) % hosts.length;
        const to = pick(pagesPerHost);
        links.push({ target: { kind: 'page', host: other, page: to }, form: formAt(CROSS_HOST_FORMS, pick) });
      }
    }
    for (let index = 0; index < brokenLinksPerPage; index += 1) {
      const n = pick(pagesPerHost);
      links.push({ target: { kind: 'missing', host, n }, form: formAt(SAME_HOST_FORMS, pick) });
    }
    return links;
  }

  /** The `href` text of a link found on page `fromPage` (of the link's source host). */
  hrefOf(link: PlannedLink, fromPage: number): string {
    const path = this.pathOf(link.target);
    const origin = this.#origin(link.target.host);
    // Page 0 is `/`, the others sit in the `/p/` directory.
    const directory = fromPage === 0 ? '/' : '/p/';
    switch (link.form) {
      case 'absolute':
        return `${origin}${path}`;
      case 'root-relative':
        return path;
      case 'document-relative':
        if (path.startsWith(directory)) return path.length === directory.length ? './' : path.slice(directory.length);
        return `../${path.slice(1)}`;
      case 'dot-relative':
        return `${directory === '/' ? './' : '../'}${path.slice(1)}`;
      case 'fragment':
        return `${path}#part-${(link.target.kind === 'page' ? link.target.page : link.target.n) % 5}`;
      case 'upper-scheme':
        return `HTTP://${origin.slice('http://'.length)}${path}#top`;
      case 'protocol-relative':
        return `//${origin.slice('http://'.length)}${path}`;
    }
  }

  #origin(host: number): string {
    const origin = this.origins[host];
    if (origin === undefined) throw new RangeError(`no host #${host} on this site`);
    return origin;
  }
}

function formAt(forms: readonly LinkForm[], pick: (count: number) => number): LinkForm {
  return forms[pick(forms.length)] ?? 'absolute';
}
