import { createServer } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { DemoSiteConfigError } from './errors.js';
import { FaultBook } from './fault-rules.js';
import type { FaultRule } from './fault-rules.js';
import { HostLoadBook } from './host-load.js';
import { listenOnSamePort } from './listen-on-same-port.js';
import { computeReachable } from './reachable.js';
import type { ReachableOptions } from './reachable.js';
import { PageRenderer, renderStatusPage } from './page-markup.js';
import { now, RequestLog } from './request-log.js';
import type { LiveRecord, RequestRecord } from './request-log.js';
import { SiteGraph } from './site-graph.js';
import { resolveSiteSpec } from './site-spec.js';
import type { ResolvedSiteSpec, SiteSpec } from './site-spec.js';

/** A running demo site. Close it (or `await using` it) when done. */
export interface DemoSite extends AsyncDisposable {
  /** The port every host listens on. */
  readonly port: number;
  /** The site's hosts, as in the spec. */
  readonly hosts: readonly string[];
  /** Page 0 of every host, `http://HOST:PORT/`, in the order of `hosts` (a fresh array each time). */
  readonly seeds: string[];
  /**
   * URL of page `page` (0 ≤ page < pagesPerHost) of `host`.
   * @throws {DemoSiteConfigError} for an unknown host or page
   */
  urlOf(host: string, page: number): string;
  /**
   * Ground truth: the canonical URLs (no fragment) a breadth-first crawl from
   * `options.seeds` fetches: every URL in scope whose shortest link distance
   * from a seed is at most `maxDepth`, broken links (404) included, robots.txt
   * not. A crawler that keeps the depth at which it *first* saw a URL and does
   * not crawl breadth-first may fetch fewer.
   * @throws {DemoSiteConfigError} for a seed that is not a URL of the site
   */
  reachable(options: ReachableOptions): Set<string>;
  /** Every request received, in arrival order (a live view; `resetRecords` empties it). */
  readonly requests: readonly RequestRecord[];
  /** Requests received for `url` (fragment ignored), or in total without an argument. */
  requestCount(url?: string): number;
  /** Forgets the request records. */
  resetRecords(): void;
  /**
   * Replaces the fault rules (their `times` counters start again from zero).
   * @throws {DemoSiteConfigError} when a rule is malformed (the old rules then stay)
   */
  setFaults(faults: readonly FaultRule[]): void;
  /**
   * Stops the servers and destroys every open connection, hanging and slow
   * ones included; when it resolves, every request record is final. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Starts a generated multi-host website on loopback: one HTTP server per
 * host, all on the same port.
 *
 * @throws {DemoSiteConfigError} when the spec cannot work
 * @throws {DemoSiteListenError} when the addresses cannot be bound
 */
export async function startDemoSite(spec: SiteSpec): Promise<DemoSite> {
  return RunningDemoSite.start(spec);
}

/** Server keep-alive: long enough for a crawler's pooled connections to be reused between requests. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

class RunningDemoSite implements DemoSite {
  readonly port: number;
  readonly hosts: readonly string[];
  readonly #spec: ResolvedSiteSpec;
  readonly #graph: SiteGraph;
  readonly #renderer: PageRenderer;
  readonly #log = new RequestLog();
  readonly #servers: readonly Server[];
  // Responses not yet closed, so close() can wait until their records are final.
  readonly #open = new Set<ServerResponse>();
  readonly #load: HostLoadBook;
  #faults: FaultBook;
  #closing: Promise<void> | undefined;

  private constructor(options: { spec: ResolvedSiteSpec; faults: FaultBook; servers: readonly Server[]; port: number }) {
    const { spec } = options;
    this.#spec = spec;
    this.#faults = options.faults;
    this.#servers = options.servers;
    this.port = options.port;
    this.hosts = spec.hosts;
    this.#graph = new SiteGraph({ ...spec, port: options.port });
    this.#renderer = new PageRenderer(this.#graph, spec.pageBytes);
    this.#load = new HostLoadBook(spec.load);
  }

  static async start(input: SiteSpec): Promise<RunningDemoSite> {
    const spec = resolveSiteSpec(input);
    // Check the rules before binding anything.
    const faults = new FaultBook(spec.faults, spec.hosts);
    // Filled in once every host is bound; the servers need their handler before that.
    const ready: { site?: RunningDemoSite } = {};
    const { servers, port } = await listenOnSamePort({
      hosts: spec.hosts,
      port: spec.port,
      createServer: (host) => {
        const server = createServer({ noDelay: true }, (request, response) => {
          const { site } = ready;
          if (site === undefined) {
            // Only possible while the other hosts are still binding: nobody knows the port yet.
            response.writeHead(503, { 'retry-after': '1' }).end();
            return;
          }
          site.#handle(host, request, response);
        });
        server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
        return server;
      },
    });
    ready.site = new RunningDemoSite({ spec, faults, servers, port });
    return ready.site;
  }

  get seeds(): string[] {
    return this.#graph.origins.map((origin) => `${origin}/`);
  }

  get requests(): readonly RequestRecord[] {
    return this.#log.records;
  }

  urlOf(host: string, page: number): string {
    const index = this.#graph.hostIndexOf(host);
    if (index === undefined) throw new DemoSiteConfigError('host', `${host} is not one of the site's hosts`);
    if (!Number.isInteger(page) || page < 0 || page >= this.#spec.pagesPerHost) {
      throw new DemoSiteConfigError('page', `must be an integer from 0 to ${this.#spec.pagesPerHost - 1}, got ${page}`);
    }
    return this.#graph.urlOf({ kind: 'page', host: index, page });
  }

  reachable(options: ReachableOptions): Set<string> {
    return computeReachable(this.#graph, options);
  }

  requestCount(url?: string): number {
    return this.#log.count(url);
  }

  resetRecords(): void {
    this.#log.reset();
  }

  setFaults(faults: readonly FaultRule[]): void {
    this.#faults = new FaultBook(faults, this.#spec.hosts);
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    // Taken before closing: every response still open now gets destroyed and emits 'close'.
    const open = [...this.#open].map(
      (response) =>
        new Promise<void>((resolve) => {
          response.once('close', resolve);
        }),
    );
    await Promise.all([...this.#servers.map(closeServer), ...open]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #handle(host: string, request: IncomingMessage, response: ServerResponse): void {
    const path = request.url ?? '/';
    // Servers only exist for the site's hosts, so the lookups cannot miss.
    const hostIndex = this.#graph.hostIndexOf(host) ?? 0;
    const url = requestUrl(this.#graph.origins[hostIndex] ?? '', path);
    const record = this.#log.begin({
      host,
      path,
      url: url?.href ?? path,
      method: request.method ?? 'GET',
      userAgent: request.headers['user-agent'],
    });
    response.once('finish', () => {
      record.endedAt = now();
    });
    this.#open.add(response);
    response.once('close', () => {
      this.#open.delete(response);
      if (response.writableFinished) return;
      record.endedAt = now();
      record.aborted = true;
    });
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(response, record, { status: 405, body: renderStatusPage(405), headers: { allow: 'GET, HEAD' } });
      return;
    }
    const pathname = url?.pathname ?? path;
    const load = this.#load.arrive(host, record.startedAt);
    response.once('close', () => {
      this.#load.leave(host);
    });
    const fault = this.#faults.take(host, pathname);
    // Left unanswered on purpose: the connection stays open until the client leaves or close() destroys it.
    if (fault?.hang === true) return;
    if (fault === undefined && load.shedStatus !== undefined) {
      send(response, record, { status: load.shedStatus, body: renderStatusPage(load.shedStatus), headers: {} });
      return;
    }
    const delayMs = fault === undefined ? (this.#spec.slowPages.get(pathname) ?? 0) + load.delayMs : (fault.delayMs ?? 0);
    const respond = (): void => {
      const headers: OutgoingHttpHeaders = fault?.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter };
      if (fault !== undefined && fault.status !== 200) {
        send(response, record, { status: fault.status, body: renderStatusPage(fault.status), headers });
      } else {
        this.#respondNormally({ host, hostIndex, pathname, record, response, headers });
      }
    };
    if (delayMs <= 0) {
      respond();
      return;
    }
    const timer = setTimeout(respond, delayMs);
    // The client (or close()) may end the connection first: then there is nobody to answer.
    response.once('close', () => {
      clearTimeout(timer);
    });
  }

  #respondNormally(options: {
    host: string;
    hostIndex: number;
    pathname: string;
    record: LiveRecord;
    response: ServerResponse;
    headers: OutgoingHttpHeaders;
  }): void {
    const { host, hostIndex, pathname, record, response, headers } = options;
    if (pathname === '/robots.txt') {
      const robots = this.#spec.robotsTxt.get(host);
      if (robots !== undefined) {
        const body = Buffer.from(robots, 'utf8');
        send(response, record, { status: 200, body, headers, contentType: 'text/plain; charset=utf-8' });
        return;
      }
    }
    const page = this.#graph.pageOfPath(pathname);
    if (page === undefined) {
      send(response, record, { status: 404, body: renderStatusPage(404), headers });
      return;
    }
    send(response, record, { status: 200, body: this.#renderer.page(hostIndex, page), headers });
  }
}

function send(
  response: ServerResponse,
  record: LiveRecord,
  options: { status: number; body: Buffer; headers: OutgoingHttpHeaders; contentType?: string },
): void {
  record.status = options.status;
  response.writeHead(options.status, {
    ...options.headers,
    'content-type': options.contentType ?? 'text/html; charset=utf-8',
    'content-length': options.body.length,
  });
  // Node leaves the body out by itself for HEAD requests.
  response.end(options.body);
}

function requestUrl(origin: string, path: string): URL | undefined {
  try {
    // Concatenate rather than resolve: a target such as `//p/1` must stay a path, not become a host.
    return path.startsWith('/') ? new URL(`${origin}${path}`) : new URL(path);
  } catch {
    return undefined;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
    // Hanging, slow and keep-alive connections would otherwise hold close() open.
    server.closeAllConnections();
  });
}
