import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FetchRobots } from '../src/index.js';

/** A loopback HTTP server whose handler a test can swap, counting requests per path. */
export interface TestSite {
  readonly origin: string;
  readonly port: number;
  /** Requests seen per path. */
  readonly hits: Map<string, number>;
  handle: (request: IncomingMessage, response: ServerResponse) => void;
  close(): Promise<void>;
}

export async function startSite(handle: TestSite['handle']): Promise<TestSite> {
  const hits = new Map<string, number>();
  const site = { hits, handle } as TestSite;
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    site.handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(site, {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** Serves `body` as robots.txt with `status` (and a text/plain type unless told otherwise). */
export function serve(body: string | Buffer, status = 200, headers: Record<string, string> = {}): TestSite['handle'] {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'text/plain', ...headers });
    response.end(body);
  };
}

/** The test's stand-in for the crawler's fetch: node's fetch, following redirects. */
export const fetchRobots: FetchRobots = async (robotsUrl, { signal }) => {
  const response = await fetch(robotsUrl, { redirect: 'follow', signal });
  const retryAfter = Number(response.headers.get('retry-after') ?? 'NaN');
  return {
    status: response.status,
    body: Buffer.from(await response.arrayBuffer()),
    finalUrl: response.url,
    ...(Number.isFinite(retryAfter) ? { retryAfterMs: retryAfter * 1000 } : {}),
  };
};

export function testPrefix(): string {
  return `{t-${randomUUID()}}:cq:robots`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
