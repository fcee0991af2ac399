import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ArrivalClock } from '@crawlq/testing';

/** One request as a test server saw it. */
export interface NamedRequest {
  /** Host header, without the port. */
  readonly host: string;
  readonly path: string;
  /** The address the connection came in on: which server it reached. */
  readonly server: string;
  /** Server-side arrival time (epoch ms): when its handler ran. */
  readonly startedAt: number;
  /** The earliest it can have arrived (epoch ms): before `startedAt` when this process's loop had stalled (see ArrivalClock). */
  readonly notBefore: number;
}

/**
 * Name-based virtual hosting on loopback, as a shared host does it: one HTTP
 * server per address, all on one port, each serving every site by its Host
 * header. A site `name` has pages /, /p/1 .. /p/(pages-1), each linking to
 * all the others, and a robots.txt allowing all. `redirects` sends a path of
 * one site to another site's page (a cross-name redirect). Every request is
 * logged with the address it arrived on and when (bounded from below across
 * this process's own stalls: see ArrivalClock).
 */
export class NameSites {
  readonly requests: NamedRequest[] = [];
  readonly #servers: Server[];
  readonly port: number;
  readonly #pages: (host: string) => number;
  readonly #redirects: ReadonlyMap<string, string>;
  readonly clock = new ArrivalClock();

  private constructor(servers: Server[], port: number, pages: (host: string) => number, redirects: ReadonlyMap<string, string>) {
    this.#servers = servers;
    this.port = port;
    this.#pages = pages;
    this.#redirects = redirects;
  }

  static async start(options: { readonly addresses: readonly string[]; readonly pages: (host: string) => number; readonly redirects?: ReadonlyMap<string, string> }): Promise<NameSites> {
    const servers: Server[] = [];
    let port = 0;
    // The servers need their handler before the site exists (it needs their port).
    const holder: { sites?: NameSites } = {};
    const handle = (request: IncomingMessage, response: ServerResponse) => holder.sites?.handle(request, response);
    for (const address of options.addresses) {
      const server = createServer(handle);
      server.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, address, () => resolve());
      });
      port = (server.address() as AddressInfo).port;
      servers.push(server);
    }
    const sites = new NameSites(servers, port, options.pages, options.redirects ?? new Map());
    holder.sites = sites;
    return sites;
  }

  url(host: string, path = '/'): string {
    return `http://${host}:${this.port}${path}`;
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    const host = (request.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const path = request.url ?? '/';
    const { at, notBefore } = this.clock.arrival();
    this.requests.push({ host, path, server: request.socket.localAddress?.replace(/^::ffff:/, '') ?? '', startedAt: at, notBefore });
    const redirect = this.#redirects.get(`${host}${path}`);
    if (redirect !== undefined) {
      response.writeHead(301, { location: redirect, 'content-length': 0 });
      response.end();
      return;
    }
    if (path === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('User-agent: *\nAllow: /\n');
      return;
    }
    const pages = this.#pages(host);
    const match = /^\/(?:p\/(\d+))?$/.exec(path);
    const page = match ? Number(match[1] ?? 0) : -1;
    if (page < 0 || page >= pages) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
      return;
    }
    const links = Array.from({ length: pages }, (_, i) => `<a href="${i === 0 ? '/' : `/p/${i}`}">page ${i}</a>`).join('\n');
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(`<!doctype html><html><head><title>${host} ${page}</title></head><body>${links}</body></html>`);
  }

  async close(): Promise<void> {
    this.clock.stop();
    await Promise.all(this.#servers.map((server) => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    })));
  }
}
