import { setTimeout as sleep } from 'node:timers/promises';
import { createFetcher, RetryableFetchError, type Fetcher } from '@crawlq/fetcher';
import { createGroupLimiter, type GroupLimiter } from '@crawlq/group-limiter';
import { maxCertainlyInWindow, startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchThroughGate } from '../../src/gate/gated-fetch.js';
import { startArrivalServer, type HostArrival, type ArrivalServer } from '../support/arrival-server.js';
import { GroupGate } from '../../src/gate/group-gate.js';
import { AddressBook, type TtlAnswer } from '../../src/gate/address-book.js';

// The server gate when a host's DNS lookup fails: a real limiter on a real
// Redis, the address book the worker uses (its lookup replaced by a hook that
// fails as the test says), a real fetcher whose sockets take the book's
// addresses, and an HTTP server on one loopback address serving every name.
// Judged at that server: which requests arrived, and when.
const SERVER = '127.0.0.71';
const SERVER_RATE = 4;

let redis: TestRedis;
let server: ArrivalServer;
let port: number;
let arrivals: HostArrival[];

beforeAll(async () => {
  redis = await startTestRedis();
  server = await startArrivalServer(SERVER);
  ({ port, arrivals } = server);
});
afterAll(async () => {
  await server.close();
  await redis.stop();
});

/** A lookup hook: every name resolves to SERVER, except while `fail` says otherwise for this call. */
type Failure = (host: string, call: number) => NodeJS.ErrnoException | undefined;

interface Setup {
  readonly gate: GroupGate;
  readonly fetcher: Fetcher;
  readonly lookups: string[];
  readonly limiter: GroupLimiter;
}

async function setup(prefix: string, fail: Failure, lookupGraceMs?: number): Promise<Setup> {
  const limiter = createGroupLimiter({ redis: redis.client(), prefix: `${prefix}-{g}` });
  // Each name may go at 20/s; the one server behind them all at 4/s.
  await limiter.setPolicy({ defaults: { rate: { max: 20, durationMs: 1000 }, concurrency: null }, servers: { defaults: { rate: { max: SERVER_RATE, durationMs: 1000 } } } });
  const lookups: string[] = [];
  const book = new AddressBook({
    redis: redis.client(),
    namespace: prefix,
    lookup: async (host): Promise<TtlAnswer> => {
      lookups.push(host);
      const error = fail(host, lookups.length);
      // A timeout takes a while, as one does; the others answer at once.
      if (error?.code === 'ETIMEOUT') await sleep(30);
      if (error !== undefined) throw error;
      return { addresses: [SERVER], ttlMs: 60_000 };
    },
    ttlMinMs: 60_000,
    ttlMaxMs: 60_000,
    ...(lookupGraceMs === undefined ? {} : { lookupGraceMs }),
  });
  const gate = new GroupGate(limiter, { addressOf: (host) => book.addressOf(host) });
  const fetcher = createFetcher({ allowPrivateNetwork: true, resolve: book.resolve, connectionKey: book.currentAddress, retry: { limit: 0 } });
  return { gate, fetcher, lookups, limiter };
}

const dnsError = (code: string, host: string): NodeJS.ErrnoException => Object.assign(new Error(`query ${code} ${host}`), { code });

/** Fetches `url` as a one-off fetch does: a denial is slept through in-process and asked again. Records the denials' reasons. */
async function fetchOnce(on: Setup, url: string, denials: string[]): Promise<number> {
  const { response } = await fetchThroughGate(url, {
    gate: on.gate,
    fetcher: on.fetcher,
    groupOf: (target) => new URL(target).hostname,
    maxInlineWaitMs: 500,
    onDenied: async (denial) => {
      denials.push(denial.reason);
      await sleep(denial.retryInMs);
    },
  });
  return response.status;
}

describe('the server gate when a DNS lookup fails', () => {
  it('holds back requests whose lookup timed out or failed until their address is known, so the server never sees more than its rate', { timeout: 60_000 }, async () => {
    arrivals.length = 0;
    const names = Array.from({ length: 10 }, (_, i) => `n${i}.lookup.test`);
    // The first lookup of every name fails: a timeout for half of them, SERVFAIL or EAI_AGAIN for the others.
    const failed = new Set<string>();
    const on = await setup('lookup-fails', (host, call) => {
      if (failed.has(host)) return undefined;
      failed.add(host);
      return dnsError(['ETIMEOUT', 'ESERVFAIL', 'EAI_AGAIN'][call % 3]!, host);
    });
    const denials: string[] = [];
    try {
      const statuses = await Promise.all(names.map((name) => fetchOnce(on, `http://${name}:${port}/`, denials)));
      expect(statuses).toEqual(names.map(() => 200));
    } finally {
      on.fetcher.close();
    }
    // Every name reached the server once, and only after a lookup that answered.
    expect(arrivals.map((arrival) => arrival.host).sort()).toEqual([...names].sort());
    expect(on.lookups.filter((host) => host === names[0]).length).toBe(2);
    // The server, whose rate is 4/s, saw no more than that in any second (counted
    // as certainly inside it: this process's own stalls bunch the handler times)...
    expect(maxCertainlyInWindow(arrivals, 1000)).toBeLessThanOrEqual(SERVER_RATE);
    // ...as each failed lookup held its request back as a server-level denial (none went out counted by its group alone).
    expect(denials.filter((reason) => reason === 'server-lookup').length).toBe(names.length);
    // The server level counted every one of them.
    const status = (await on.limiter.servers()).find((entry) => entry.server === SERVER);
    expect(status?.admitted).toBeGreaterThanOrEqual(names.length);
  });

  it('fails a request whose lookup keeps failing past the grace as a fetch failure, never sending it', { timeout: 30_000 }, async () => {
    arrivals.length = 0;
    const on = await setup('lookup-broken', (host) => dnsError('ETIMEOUT', host), 300);
    const denials: string[] = [];
    try {
      const failure = await fetchOnce(on, `http://broken.lookup.test:${port}/`, denials).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(RetryableFetchError);
      expect((failure as RetryableFetchError).failureReason).toBe('timeout');
      expect((failure as RetryableFetchError).code).toBe('ETIMEOUT');
      expect(String((failure as Error).message)).toMatch(/DNS lookup of broken\.lookup\.test/);
    } finally {
      on.fetcher.close();
    }
    expect(denials.length).toBeGreaterThan(0);
    expect(denials.every((reason) => reason === 'server-lookup')).toBe(true);
    expect(arrivals).toEqual([]);
  });

  it('fails a host with no address (NXDOMAIN) with the lookup\'s error, without a second lookup that could connect it uncounted', { timeout: 30_000 }, async () => {
    arrivals.length = 0;
    // NXDOMAIN the first time, an address after: the request was counted at no server, so it must not connect.
    const on = await setup('lookup-nxdomain', (host, call) => (call === 1 ? dnsError('ENOTFOUND', host) : undefined));
    const denials: string[] = [];
    try {
      await expect(fetchOnce(on, `http://gone.lookup.test:${port}/`, denials)).rejects.toMatchObject({ code: 'ENOTFOUND' });
    } finally {
      on.fetcher.close();
    }
    expect(denials).toEqual([]);
    expect(on.lookups).toEqual(['gone.lookup.test']);
    expect(arrivals).toEqual([]);
  });
});
