import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it (server-side clock). */
export interface ServedRequest {
  readonly path: string;
  readonly startedAt: number;
}

export interface CatalogueSite {
  readonly origin: string;
  readonly requests: ServedRequest[];
  /** Every product id the lists link to. */
  readonly productIds: readonly number[];
  /** Product ids whose page has no price (a crawler's handler fails on it). */
  readonly brokenIds: readonly number[];
  close(): Promise<void>;
}

export interface CatalogueSpec {
  readonly host: string;
  /** List pages, each linking to the next. */
  readonly pages: number;
  readonly productsPerPage: number;
  readonly brokenIds?: readonly number[];
  /** Milliseconds each product page takes to answer. */
  readonly productDelayMs?: number;
}

/**
 * A paginated catalogue on a loopback host: /list/N links to its products
 * (`a.product`) and the next list (`a.next`); /product/ID has `h1` and
 * `.price`. /list/1 also links to /moved (a redirect into /private/, which
 * robots.txt disallows) and carries 5,000 links to another host.
 */
export async function startCatalogueSite(spec: CatalogueSpec): Promise<CatalogueSite> {
  const requests: ServedRequest[] = [];
  const brokenIds = spec.brokenIds ?? [];
  const productIds = Array.from({ length: spec.pages * spec.productsPerPage }, (_, index) => index + 1);
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push({ path, startedAt: Date.now() });
    const html = (body: string) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html><head><title>${path}</title></head><body>${body}</body></html>`);
    };
    if (path === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      return response.end('User-agent: *\nDisallow: /private/\n');
    }
    if (path === '/moved') {
      response.writeHead(301, { location: '/private/secret' });
      return response.end();
    }
    const list = /^\/list\/(\d+)$/.exec(path);
    if (list) {
      const page = Number(list[1]);
      if (page < 1 || page > spec.pages) return notFound();
      const products = productIds.slice((page - 1) * spec.productsPerPage, page * spec.productsPerPage);
      const links = products.map((id) => `<a class="product" href="/product/${id}">product ${id}</a>`).join('\n');
      const next = page < spec.pages ? `<a class="next" href="/list/${page + 1}">next</a>` : '';
      const extra = page === 1 ? `<a class="product" href="/moved">moved</a>${Array.from({ length: 5_000 }, (_, i) => `<a class="elsewhere" href="http://127.0.0.250:9/p${i}">x</a>`).join('')}` : '';
      return html(`${links}\n${next}\n${extra}`);
    }
    const product = /^\/product\/(\d+)$/.exec(path);
    if (product) {
      const id = Number(product[1]);
      if (!productIds.includes(id)) return notFound();
      const answer = () => html(`<h1>Product ${id}</h1>${brokenIds.includes(id) ? '' : `<span class="price">${id}.50</span>`}`);
      if (spec.productDelayMs) setTimeout(answer, spec.productDelayMs);
      else answer();
      return;
    }
    return notFound();
    function notFound() {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, spec.host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${spec.host}:${port}`,
    requests,
    productIds,
    brokenIds,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
