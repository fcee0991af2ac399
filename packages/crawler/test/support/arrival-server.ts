import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it arrive: the name it was sent to, and when (epoch ms). */
export interface HostArrival {
  readonly host: string;
  readonly at: number;
}

/** An HTTP server on one loopback address that answers `ok` to any name and notes each arrival. */
export interface ArrivalServer {
  readonly port: number;
  /** Every arrival so far; a test empties it (`length = 0`) to start afresh. */
  readonly arrivals: HostArrival[];
  close(): Promise<void>;
}

/** Politeness judged where it counts: at the server, by when requests arrived. */
export async function startArrivalServer(address: string): Promise<ArrivalServer> {
  const arrivals: HostArrival[] = [];
  const http = createServer((request, response) => {
    arrivals.push({ host: (request.headers.host ?? '').split(':')[0] ?? '', at: Date.now() });
    response.end('ok');
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, address, () => resolve());
  });
  return {
    port: (http.address() as AddressInfo).port,
    arrivals,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
