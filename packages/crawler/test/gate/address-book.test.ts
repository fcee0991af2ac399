import { createSocket, type Socket } from 'node:dgram';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressBook, dnsTtlLookup, isNoSuchHost, type TtlAnswer } from '../../src/gate/address-book.js';

// The address book against a real Redis, with a lookup whose answer the test
// changes (as a host's DNS record changes) and a short TTL.
let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function book(namespace: string, table: Map<string, string>, lookups: string[]): AddressBook {
  return new AddressBook({
    redis: redis.client(),
    namespace,
    lookup: (host): Promise<TtlAnswer> => {
      lookups.push(host);
      const address = table.get(host);
      return address === undefined ? Promise.reject(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' })) : Promise.resolve({ addresses: [address], ttlMs: 50 });
    },
    ttlMinMs: 50,
    ttlMaxMs: 50,
  });
}

describe('AddressBook', () => {
  it('connects a request to the address its gate was given, even once the TTL ran out, while the gate moves with the record', async () => {
    const table = new Map([['moving.test', '127.0.0.81']]);
    const lookups: string[] = [];
    const addresses = book('book-hold', table, lookups);
    // The gate counts the request at the old address; the record changes while it waits for its slot.
    expect(await addresses.addressOf('moving.test')).toBe('127.0.0.81');
    table.set('moving.test', '127.0.0.82');
    await sleep(120);
    // Its socket goes where it was counted, with no lookup between the admission and the socket.
    const before = lookups.length;
    expect(await addresses.resolve('moving.test')).toEqual(['127.0.0.81']);
    expect(addresses.currentAddress('moving.test')).toBe('127.0.0.81');
    expect(lookups.length).toBe(before);
    // The next request's gate follows the TTL: the new address, and its socket with it.
    expect(await addresses.addressOf('moving.test')).toBe('127.0.0.82');
    expect(await addresses.resolve('moving.test')).toEqual(['127.0.0.82']);
    expect(addresses.currentAddress('moving.test')).toBe('127.0.0.82');
  });

  it('resolves a host the gate never asked about by its TTL alone, and fails one that does not resolve', async () => {
    const table = new Map([['plain.test', '127.0.0.83']]);
    const addresses = book('book-plain', table, []);
    expect(await addresses.resolve('plain.test')).toEqual(['127.0.0.83']);
    table.set('plain.test', '127.0.0.84');
    await sleep(120);
    expect(await addresses.resolve('plain.test')).toEqual(['127.0.0.84']);
    await expect(addresses.resolve('missing.test')).rejects.toThrow(/ENOTFOUND/);
    expect(await addresses.addressOf('missing.test')).toBeUndefined();
  });
});

/** A DNS server on loopback answering every query with `rcode` (3 NXDOMAIN, 2 SERVFAIL), or never (undefined). */
async function dnsServer(rcode: number | undefined): Promise<{ socket: Socket; server: string }> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (rcode === undefined || query.length < 17) return;
    let at = 12;
    while (at < query.length && query[at] !== 0) at += 1 + (query[at] ?? 0);
    const reply = Buffer.from(query.subarray(0, at + 5));
    reply.writeUInt16BE(0x8180 | rcode, 2);
    reply.writeUInt16BE(1, 4);
    reply.writeUInt32BE(0, 6);
    reply.writeUInt16BE(0, 10);
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return { socket, server: `127.0.0.1:${socket.address().port}` };
}

describe('dnsTtlLookup', () => {
  it('tells a host that has no address (NXDOMAIN) from a lookup that failed (a timeout, SERVFAIL)', { timeout: 30_000 }, async () => {
    const servers = await Promise.all([dnsServer(3), dnsServer(2), dnsServer(undefined)]);
    try {
      const [nxdomain, servfail, silent] = await Promise.all(
        servers.map(({ server }) => dnsTtlLookup({ servers: [server], timeoutMs: 400 })('host.lookup.test').then(() => undefined, (error: unknown) => error as NodeJS.ErrnoException)),
      );
      expect(nxdomain?.code).toBe('ENOTFOUND');
      expect(isNoSuchHost(nxdomain)).toBe(true);
      // These may heal: the server gate waits for them instead of taking the host for one without an address.
      expect(servfail?.code).toBe('ESERVFAIL');
      expect(isNoSuchHost(servfail)).toBe(false);
      expect(silent?.code).toBe('ETIMEOUT');
      expect(isNoSuchHost(silent)).toBe(false);
    } finally {
      for (const { socket } of servers) socket.close();
    }
  });
});
