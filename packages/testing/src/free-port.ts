import { createServer } from 'node:net';

/**
 * A TCP port that was free on 127.0.0.1 a moment ago, for a server that a
 * test starts later (often in another process). Drawn below Linux's ephemeral
 * range, as {@link freePortPair}: a port `listen(0)` handed out is one that
 * outgoing connections and other `listen(0)` calls take next, and on a busy
 * machine one did take it before the test's server listened (EADDRINUSE).
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return freeRun(host, 1);
}

/** Where ports are drawn from: above the well-known and common service ports, below the ephemeral range. */
const DRAW_LOW = 20_000;
const DRAW_HIGH = 32_000;

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
export function freePortPair(host = '127.0.0.1'): Promise<number> {
  return freeRun(host, 2);
}

/** The first of `count` consecutive ports, all free a moment ago, drawn at random from DRAW_LOW..DRAW_HIGH. */
async function freeRun(host: string, count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = DRAW_LOW + Math.floor(Math.random() * (DRAW_HIGH - DRAW_LOW - count + 2));
    let free = true;
    for (let next = port; free && next < port + count; next += 1) free = await canListen(next, host);
    if (free) return port;
  }
  throw new Error(`no ${count} consecutive free port${count === 1 ? '' : 's'} found in 50 tries`);
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
