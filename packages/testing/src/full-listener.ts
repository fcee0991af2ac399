import { spawn } from 'node:child_process';
import net from 'node:net';

/** A loopback port where a TCP handshake never completes; see {@link startFullListener}. */
export interface FullListener {
  readonly port: number;
  /** The connections that fill the accept queue; they stay open until `close`. */
  readonly held: readonly net.Socket[];
  readonly close: () => void;
}

/**
 * A listening socket on 127.0.0.1 whose accept queue is full, so a new
 * connection's SYN is dropped and its connect never completes (the client
 * retransmits for about two minutes): on loopback a connect otherwise
 * succeeds at once, or is refused at once. The listener lives in a child
 * process that blocks its own event loop right after listening (backlog 1),
 * so it never accepts; Linux completes backlog + 1 handshakes into the queue,
 * which this fills with held connections, and drops every later SYN.
 */
export async function startFullListener(): Promise<FullListener> {
  const script = `
    const net = require('node:net');
    const fs = require('node:fs');
    const server = net.createServer();
    server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      fs.writeSync(1, server.address().port + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const held: net.Socket[] = [];
  const close = (): void => {
    for (const socket of held) socket.destroy();
    child.kill('SIGKILL');
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
      child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
    });
    for (let i = 0; i < 2; i++) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      held.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
    }
    return { port, held, close };
  } catch (error) {
    close();
    throw error;
  }
}
