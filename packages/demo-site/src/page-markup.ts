import { STATUS_CODES } from 'node:http';
import type { SiteGraph } from './site-graph.js';

// Plain words only: the padding must never contain markup or anything that looks like a link.
const LOREM =
  'Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et ' +
  'dolore magna aliqua Ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ' +
  'ex ea commodo consequat Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu ' +
  'fugiat nulla pariatur Excepteur sint occaecat cupidatat non proident sunt in culpa qui officia deserunt ' +
  'mollit anim id est laborum ';

/**
 * Renders the HTML of the site's pages. All output is ASCII, so string length
 * equals byte length and the padding can make a page exactly `pageBytes` long
 * (when the markup alone is shorter).
 */
export class PageRenderer {
  readonly #graph: SiteGraph;
  readonly #pageBytes: number;
  // Long enough to cut `pageBytes` characters from any offset below LOREM.length.
  readonly #padding: string;

  constructor(graph: SiteGraph, pageBytes: number) {
    this.#graph = graph;
    this.#pageBytes = pageBytes;
    this.#padding = LOREM.repeat(Math.ceil(pageBytes / LOREM.length) + 1);
  }

  /** The HTML of page `page` of host number `host`. */
  page(host: number, page: number): Buffer {
    const graph = this.#graph;
    const { hosts, pagesPerHost } = graph.layout;
    const hostName = hosts[host] ?? '';
    const title = `Page ${page} on ${hostName}`;
    const items = graph.linksOf(host, page).map((link) => {
      const { target } = link;
      const label =
        target.kind === 'missing'
          ? `Missing page ${target.n}`
          : target.host === host
            ? `Page ${target.page}`
            : `Page ${target.page} on ${hosts[target.host] ?? ''}`;
      return `<li><a href="${graph.hrefOf(link, page)}">${label}</a></li>\n`;
    });
    const head =
      '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
      `<title>${title}</title>\n` +
      `<meta name="description" content="Page ${page} of ${pagesPerHost} on ${hostName}, a generated crawlq demo page.">\n` +
      `</head>\n<body>\n<h1 id="top">${title}</h1>\n<ul class="links">\n${items.join('')}</ul>\n<p class="padding">`;
    const tail =
      '</p>\n<footer><a href="#top">Back to top</a> <a href="mailto:webmaster@example.invalid">Contact</a></footer>\n' +
      '</body>\n</html>\n';
    const room = Math.max(0, this.#pageBytes - head.length - tail.length);
    // Start the padding at a page-dependent word so pages differ in more than their links.
    const offset = (page * 7 + host * 13) % LOREM.length;
    return Buffer.from(head + this.#padding.slice(offset, offset + room) + tail, 'latin1');
  }
}

/** A small HTML body for a status without content of its own (404, faults). */
export function renderStatusPage(status: number): Buffer {
  const reason = STATUS_CODES[status] ?? 'Unknown';
  return Buffer.from(
    `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${status} ${reason}</title></head>\n` +
      `<body><h1>${status} ${reason}</h1></body>\n</html>\n`,
    'latin1',
  );
}
