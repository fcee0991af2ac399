import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestRecord } from '@crawlq/demo-site';

/** What a scripted host answers: a status, headers and body, after an optional delay. */
export interface ScriptedAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly delayMs?: number;
}

/** Answers a request to `host` for `path` (path and query); `seen` counts this path's requests so far, from 1. */
export type Script = (host: string, path: string, seen: number) => ScriptedAnswer;

/** Wall-clock ms with sub-ms precision, the clock the demo site's request log uses. */
function now(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Real HTTP servers on several loopback addresses sharing one port, each
 * request logged as the server saw it (start on arrival, end when answered):
 * for redirect cases the demo site does not script.
 */
export class ScriptedHosts {
  /** Every request, in arrival order (live). */
  readonly requests: readonly RequestRecord[];
  readonly #servers: Server[];
  readonly port: number;

  private constructor(servers: Server[], port: number, requests: readonly RequestRecord[]) {
    this.#servers = servers;
    this.port = port;
    this.requests = requests;
  }

  static async start(hosts: readonly string[], script: Script): Promise<ScriptedHosts> {
    const requests: { -readonly [K in keyof RequestRecord]: RequestRecord[K] }[] = [];
    const counts = new Map<string, number>();
    const handler = (host: string) => (request: IncomingMessage, response: ServerResponse) => {
      const path = request.url ?? '/';
      const key = `${host}${path}`;
      const seen = (counts.get(key) ?? 0) + 1;
      counts.set(key, seen);
      const record = { host, path, url: `http://${host}${path}`, method: request.method ?? 'GET', status: 0, startedAt: now(), endedAt: Number.NaN, aborted: false };
      requests.push(record);
      const answer = script(host, path, seen);
      const send = () => {
        record.status = answer.status;
        response.writeHead(answer.status, { 'content-type': 'text/html', ...answer.headers });
        response.end(answer.body ?? '', () => (record.endedAt = now()));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    };
    const servers: Server[] = [];
    let port = 0;
    for (const host of hosts) {
      const server = createServer(handler(host));
      // Longer than any test: the crawler never reuses a socket the server already closed.
      server.keepAliveTimeout = 120_000;
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
      port = (server.address() as AddressInfo).port;
      servers.push(server);
    }
    return new ScriptedHosts(servers, port, requests);
  }

  url(host: string, path: string): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Requests `host` saw, in arrival order. */
  at(host: string): RequestRecord[] {
    return this.requests.filter((request) => request.host === host);
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      ),
    );
  }
}
