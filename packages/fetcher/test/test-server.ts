import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One request the test server received. */
export interface SeenRequest {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  /** performance.now() on arrival. */
  readonly at: number;
}

/** A real node:http server on 127.0.0.1 that records what it saw. */
export interface TestServer {
  readonly origin: string;
  readonly port: number;
  readonly requests: SeenRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Requests seen for `path` (path + query). */
  count(path: string): number;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: number) => void;

/** Starts a server; `handler` gets the per-path request number (1-based) as `seen`. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers, at: performance.now() });
    const seen = requests.filter((r) => r.path === path).length;
    handler(req, res, seen);
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    connections: () => connections,
    count: (path) => requests.filter((r) => r.path === path).length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
