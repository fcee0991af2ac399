import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StaticSite {
  readonly origin: string;
  readonly requests: string[];
  close(): Promise<void>;
}

/** A loopback site serving fixed pages (path → content type and body); the origin is known to `pages`. */
export async function startStaticSite(host: string, pages: (origin: string) => Record<string, { type: string; body: string }>): Promise<StaticSite> {
  const requests: string[] = [];
  let served: Record<string, { type: string; body: string }> = {};
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push(path);
    const page = served[path];
    if (page === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': page.type });
    response.end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  served = pages(origin);
  return {
    origin,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const html = (body: string, title = 'page') => ({ type: 'text/html; charset=utf-8', body: `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>` });

/** A news site: robots.txt names a sitemap listing five articles and the home page. */
export function newsPages(origin: string): Record<string, { type: string; body: string }> {
  const articles = [1, 2, 3, 4, 5];
  const urls = ['/', ...articles.map((id) => `/news/${id}`)];
  return {
    '/robots.txt': { type: 'text/plain', body: `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n` },
    '/sitemap.xml': {
      type: 'application/xml',
      body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((path) => `<url><loc>${origin}${path}</loc></url>`).join('')}</urlset>`,
    },
    '/': html('<h2>Latest news</h2>'),
    ...Object.fromEntries(
      articles.map((id) => [`/news/${id}`, html(`<article><h1>Headline ${id}</h1><time datetime="2026-12-0${id}">day ${id}</time><p>${'word '.repeat(id * 10)}</p></article>`)]),
    ),
  };
}

/** A docs site: every page's nav links to the others; each page has two h2 sections. */
export function docsPages(): Record<string, { type: string; body: string }> {
  const names = ['index', 'install', 'usage'];
  const nav = `<nav>${names.map((name) => `<a href="/${name === 'index' ? '' : name}">${name}</a>`).join(' ')}</nav>`;
  const page = (name: string) => html(`${nav}<main><h1>${name}</h1><h2 id="about">About ${name}</h2><p>What ${name} is.</p><h2 id="more">More on ${name}</h2><p>Details of ${name}.</p></main>`, `Docs: ${name}`);
  return { '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nAllow: /\n' }, '/': page('index'), '/install': page('install'), '/usage': page('usage') };
}
