import { get, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { OpenSitemap } from '../src/index.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A loopback HTTP server with a route table a test fills in, counting requests per path. */
export interface TestSite {
  readonly origin: string;
  readonly routes: Map<string, Handler>;
  readonly hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startSite(): Promise<TestSite> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route) route(request, response);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    routes,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function xml(body: string | Buffer, contentType = 'application/xml'): Handler {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': contentType });
    response.end(body);
  };
}

export function gzipped(body: string): Handler {
  return xml(gzipSync(body), 'application/x-gzip');
}

export function urlset(locs: readonly string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs
    .map((loc) => `  <url><loc>${loc}</loc></url>\n`)
    .join('')}</urlset>\n`;
}

export function sitemapIndex(locs: readonly string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs
    .map((loc) => `  <sitemap><loc>${loc}</loc></sitemap>\n`)
    .join('')}</sitemapindex>\n`;
}

/** The test's streaming fetch: node:http, the response itself as the stream; non-2xx throws. */
export const open: OpenSitemap = (url) =>
  new Promise((resolve, reject) => {
    get(url, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        resolve(response);
      } else {
        response.destroy();
        reject(new Error(`HTTP ${status} for ${url}`));
      }
    }).on('error', reject);
  });

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** `text` as a readable stream of `size`-byte chunks. */
export function chunksOf(text: string | Buffer, size: number): Readable {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) chunks.push(bytes.subarray(offset, offset + size));
  return Readable.from(chunks);
}
