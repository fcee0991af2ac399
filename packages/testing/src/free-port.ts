import { createServer } from 'node:net';

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the probe port'));
      });
    });
  });
}

/**
 * Two consecutive TCP ports (`port`, `port + 1`) that were both free on
 * 127.0.0.1 a moment ago: for a command that gives its Nth process the port
 * `--port + N`. A port from {@link freePort} alone says nothing of the next one,
 * which another test's server may hold.
 */
export async function freePortPair(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await freePort(host);
    if (port < 65_535 && (await canListen(port + 1, host))) return port;
  }
  throw new Error('no two consecutive free ports found in 50 tries');
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
