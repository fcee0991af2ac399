import { createServer } from 'node:net';

/**
 * A TCP port that was free on 127.0.0.1 a moment ago, for a server that a
 * test starts later (often in another process). Drawn below Linux's ephemeral
 * range, as {@link freePortPair}: a port `listen(0)` handed out is one that
 * outgoing connections and other `listen(0)` calls take next, and on a busy
 * machine one did take it before the test's server listened (EADDRINUSE).
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = PAIR_LOW + Math.floor(Math.random() * (PAIR_HIGH - PAIR_LOW + 1));
    if (await canListen(port, host)) return port;
  }
  throw new Error('no free port found in 50 tries');
}

/** Where freePortPair draws from: above the well-known and common service ports, below the ephemeral range. */
const PAIR_LOW = 20_000;
const PAIR_HIGH = 32_000;

/**
 * Two consecutive TCP ports (`port`, `port + 1`) that were both free on
 * 127.0.0.1 a moment ago: for a command that gives its Nth process the port
 * `--port + N`. A port from {@link freePort} alone says nothing of the next one,
 * which another test's server may hold.
 *
 * Drawn below Linux's ephemeral range (32768 and up by default), where
 * neither outgoing connections nor `listen(0)` take ports: on a busy machine
 * one of those took the second port in the seconds before the command's
 * second process listened on it.
 */
export async function freePortPair(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = PAIR_LOW + Math.floor(Math.random() * (PAIR_HIGH - PAIR_LOW));
    if ((await canListen(port, host)) && (await canListen(port + 1, host))) return port;
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
