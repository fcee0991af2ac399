import type { Server } from 'node:http';
import { DemoSiteListenError, errorCode } from './errors.js';

/** What {@link listenOnSamePort} binds. */
export interface ListenOnSamePortOptions {
  /** Addresses to bind, one server each. */
  readonly hosts: readonly string[];
  /** Port for every host; 0 picks one free port and uses it on all hosts. */
  readonly port: number;
  /** Makes the (not yet listening) server for one host. */
  readonly createServer: (host: string) => Server;
  /**
   * How many ports to try when `port` is 0 and a later host finds the picked one taken.
   * @default 20
   */
  readonly attempts?: number;
}

/**
 * Binds one server per host, all on the same port. With port 0 the first host
 * picks a free port and the others follow; when one of them finds it taken,
 * every server is closed and the whole set retried on a new port.
 *
 * @throws {DemoSiteListenError} when binding fails for good (closing whatever was bound first)
 */
export async function listenOnSamePort(options: ListenOnSamePortOptions): Promise<{ servers: Server[]; port: number }> {
  const attempts = options.attempts ?? 20;
  for (let attempt = 1; ; attempt += 1) {
    const servers: Server[] = [];
    let port = options.port;
    let host = '';
    try {
      for (host of options.hosts) {
        const server = options.createServer(host);
        servers.push(server);
        await listen(server, port, host);
        if (port === 0) port = boundPort(server);
      }
      return { servers, port };
    } catch (error) {
      await Promise.all(servers.map(closeQuietly));
      const retry = options.port === 0 && errorCode(error) === 'EADDRINUSE' && attempt < attempts;
      if (!retry) throw new DemoSiteListenError({ host, port, cause: error });
    }
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function boundPort(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address after listening');
  return address.port;
}

function closeQuietly(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // A server that never started listening reports ERR_SERVER_NOT_RUNNING here: nothing to undo.
    server.close(() => {
      resolve();
    });
    server.closeAllConnections();
  });
}
