import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServerOptions {
  readonly registry: Registry;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port (see `url`). */
  readonly port: number;
  /** Liveness: the process is up and its Redis answers. */
  readonly healthy: () => Promise<HealthReport>;
  /** Readiness: healthy and taking work (false while starting and while stopping). */
  readonly ready: () => boolean;
}

export interface HealthReport {
  readonly ok: boolean;
  readonly detail: string;
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/** The paths the ops handler answers. */
export const OPS_PATHS = ['/metrics', '/healthz', '/readyz'] as const;

export type OpsHandlerOptions = Omit<MetricsServerOptions, 'host' | 'port'>;

/**
 * Answers `/metrics` (Prometheus text), `/healthz` and `/readyz` (200 or
 * 503); returns false for any other path so a host server (the dashboard)
 * can route it.
 */
export function createOpsHandler(options: OpsHandlerOptions): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (!(OPS_PATHS as readonly string[]).includes(path)) return false;
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(405, 'method not allowed\n');
      return true;
    }
    const answer = async (): Promise<void> => {
      if (path === '/metrics') return send(200, await options.registry.metrics(), options.registry.contentType);
      const health = await options.healthy();
      if (path === '/healthz') return send(health.ok ? 200 : 503, `${health.detail}\n`);
      const ready = health.ok && options.ready();
      return send(ready ? 200 : 503, `${ready ? 'ready' : health.ok ? 'not taking work' : health.detail}\n`);
    };
    answer().catch((error: unknown) => send(500, `${error instanceof Error ? error.message : String(error)}\n`));
    return true;
  };
}

/**
 * Serves the ops endpoints on a plain node:http server of their own: nothing
 * else is routed, so no URL the crawler sees can reach it.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const handle = createOpsHandler(options);
  const server = createServer((request, response) => {
    if (handle(request, response)) return;
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    response.end('not found: try /metrics, /healthz or /readyz\n');
  });
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
