import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ArrivalClock, type Arrival } from '@crawlq/testing';

/**
 * One request as the server saw it arrive: the name it was sent to, and when
 * (epoch ms; `notBefore`: the earliest it can have arrived, when this
 * process's loop had stalled, see ArrivalClock).
 */
export interface HostArrival extends Arrival {
  readonly host: string;
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
  const clock = new ArrivalClock();
  const http = createServer((request, response) => {
    arrivals.push({ host: (request.headers.host ?? '').split(':')[0] ?? '', ...clock.arrival() });
    response.end('ok');
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, address, () => resolve());
  });
  return {
    port: (http.address() as AddressInfo).port,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        clock.stop();
        http.close(() => resolve());
      }),
  };
}
