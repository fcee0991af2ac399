import { lookup as systemLookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { CrawlqConfig } from '@crawlq/config';
import { resolvedHostsKey } from '@crawlq/crawl-control';
import type { RedisClient } from '@crawlq/redis';
import { ServerLookupError } from '../errors.js';
import { BoundedMap } from './bounded-map.js';

/** A host's addresses as DNS gave them, and how long the answer holds (undefined: the record did not say). */
export interface TtlAnswer {
  readonly addresses: readonly string[];
  readonly ttlMs?: number | undefined;
}

/** Resolves a host name with its record's TTL. */
export type TtlLookup = (host: string) => Promise<TtlAnswer>;

/** Options of {@link AddressBook}. */
export interface AddressBookOptions {
  readonly redis: RedisClient;
  readonly namespace: string;
  readonly lookup: TtlLookup;
  /** Bounds of the time an address is kept (the record's TTL, clamped). */
  readonly ttlMinMs: number;
  readonly ttlMaxMs: number;
  /** How long a host's lookups may fail (not NXDOMAIN) while its requests are held back. @default LOOKUP_GRACE_MS */
  readonly lookupGraceMs?: number;
}

/** Hosts kept in this process's copy; past it the oldest go (they are read from Redis again). */
const LOCAL_HOSTS = 10_000;

/**
 * How long the address the gate was last given for a host stays the one its
 * sockets connect to, even past its TTL: longer than any admitted start waits
 * for its slot (the one-off fetches' 5 s), so a request goes to the server
 * that counted it, and no lookup runs between its admission and its socket
 * (a round trip there would make the start late). The gate itself follows the
 * TTL: its next answer for the host replaces this one.
 */
const GATE_HOLD_MS = 10_000;

/**
 * A host whose lookup failed for a while (a timeout, SERVFAIL, EAI_AGAIN) is
 * waited for this long at most: until then its requests are held back at the
 * gate and asked again (no attempt used), as a lookup on a loaded machine or
 * behind a busy resolver usually answers the next time. Past it, each
 * request fails its attempt with the lookup's error, so a host whose DNS
 * stays broken ends in the dead letters instead of waiting forever.
 */
export const LOOKUP_GRACE_MS = 60_000;

/** A request whose host's lookup failed asks the gate again after this (plus up to as much again, so a fleet's retries spread). */
const LOOKUP_RETRY_MS = 300;

/**
 * Lookup errors that mean the name has no address (NXDOMAIN, no records):
 * they do not heal by asking again soon. Every other failure (ETIMEOUT,
 * ESERVFAIL, EAI_AGAIN, a refused or garbled answer) may.
 */
const NO_SUCH_HOST = new Set(['ENOTFOUND', 'ENODATA']);

/** Whether a lookup error says the host has no address, rather than that the lookup failed. */
export function isNoSuchHost(error: unknown): boolean {
  return NO_SUCH_HOST.has(String((error as NodeJS.ErrnoException | undefined)?.code ?? ''));
}

/** Hosts with a failure remembered (in a streak, or without an address); past it the oldest are forgotten. */
const FAILING_HOSTS = 10_000;

const bare = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/**
 * Which address each host's connections go to, agreed fleet-wide: the first
 * worker to resolve a host writes the address to Redis for the record's TTL
 * (clamped to [ttlMinMs, ttlMaxMs]); every worker then uses that one, for
 * the server gate (which server a request counts against) and for the
 * socket (the fetcher's lookup), so the two cannot disagree. When the entry
 * expires the host is resolved again: a host whose address changed moves to
 * its new server within one TTL. Each process keeps a copy until the Redis
 * entry's expiry, so a page costs no Redis command for this.
 */
export class AddressBook {
  readonly #options: AddressBookOptions;
  readonly #local = new Map<string, { readonly address: string; readonly until: number; heldUntil: number }>();
  readonly #pending = new Map<string, Promise<string>>();
  /** Hosts whose lookups fail transiently, since when (local clock): see LOOKUP_GRACE_MS. */
  readonly #failing = new BoundedMap<string, number>(FAILING_HOSTS);
  /** Hosts the gate was told have no address, with the lookup's error: their sockets fail with it, without a lookup of their own. */
  readonly #missing = new BoundedMap<string, { readonly error: unknown; readonly until: number }>(FAILING_HOSTS);

  constructor(options: AddressBookOptions) {
    this.#options = options;
  }

  /** Key of a host's entry: JSON `{address}`, with the entry's TTL as the key's. */
  #key(host: string): string {
    return `${this.#options.namespace}:dns:${host}`;
  }

  /** Hash host -> address of every host resolved for the crawl (for `server list`). */
  get hostsKey(): string {
    return resolvedHostsKey(this.#options.namespace);
  }

  /**
   * The address `host`'s next connection goes to; an IP literal is its own.
   * Undefined when the host has no address (NXDOMAIN, no records): the
   * request's fetch then fails with that lookup's error (see `resolve`), as
   * without a server gate. A lookup that failed otherwise (a timeout,
   * SERVFAIL, EAI_AGAIN) rejects with a {@link ServerLookupError}: the request
   * must wait, as no server can count it and its socket would have nowhere
   * agreed to go. It is waited for here with no gate slot held.
   */
  async addressOf(host: string): Promise<string | undefined> {
    const name = bare(host).toLowerCase();
    if (isIP(name) !== 0) return name;
    let address: string;
    try {
      address = await this.#agreed(name);
    } catch (error) {
      return this.#failed(name, error);
    }
    this.#failing.delete(name);
    this.#missing.delete(name);
    return this.#hold(name, address);
  }

  /** A failed lookup: no address for a host that has none, else a ServerLookupError (see LOOKUP_GRACE_MS). */
  #failed(name: string, error: unknown): undefined {
    const now = performance.now();
    if (isNoSuchHost(error)) {
      this.#failing.delete(name);
      this.#missing.remember(name, { error, until: now + GATE_HOLD_MS });
      return undefined;
    }
    this.#missing.delete(name);
    let since = this.#failing.get(name);
    if (since === undefined) {
      since = now;
      this.#failing.remember(name, since);
    }
    const failingForMs = now - since;
    throw new ServerLookupError(name, error, {
      retryInMs: LOOKUP_RETRY_MS + Math.round(Math.random() * LOOKUP_RETRY_MS),
      failingForMs,
      overdue: failingForMs >= (this.#options.lookupGraceMs ?? LOOKUP_GRACE_MS),
    });
  }

  /** The fleet's address for `name` while its TTL lasts, else resolved again (concurrent callers share one); rejects with the lookup's error. */
  #agreed(name: string): Promise<string> {
    const local = this.#local.get(name);
    if (local !== undefined && local.until > performance.now()) return Promise.resolve(local.address);
    let pending = this.#pending.get(name);
    if (pending === undefined) {
      pending = this.#fetch(name).finally(() => this.#pending.delete(name));
      this.#pending.set(name, pending);
    }
    return pending;
  }

  /** The address this process holds for `host` now (no I/O): keys the fetcher's pooled sockets. */
  readonly currentAddress = (host: string): string | undefined => this.#held(bare(host).toLowerCase());

  /**
   * A resolver for the fetcher (its SSRF guard checks what this returns):
   * the address the gate was last given for the host (see GATE_HOLD_MS), else
   * the agreed one, so the socket goes where the gate counted it. A host the
   * gate was just told has no address fails with that lookup's error, with
   * no lookup of its own (one that answered now would connect a request no
   * server counted). A host that does not resolve fails with the lookup's own error.
   */
  readonly resolve = async (host: string): Promise<readonly string[]> => {
    const name = bare(host).toLowerCase();
    if (isIP(name) !== 0) return [name];
    const held = this.#held(name);
    if (held !== undefined) return [held];
    const missing = this.#missing.get(name);
    if (missing !== undefined && missing.until > performance.now()) throw missing.error;
    try {
      return [await this.#agreed(name)];
    } catch {
      return (await this.#options.lookup(bare(host))).addresses;
    }
  };

  /** The gate is given `address` for `name`: its sockets keep it for GATE_HOLD_MS. */
  #hold(name: string, address: string): string {
    const local = this.#local.get(name);
    if (local?.address === address) local.heldUntil = performance.now() + GATE_HOLD_MS;
    return address;
  }

  /** `name`'s address, while its TTL or the gate's hold lasts. */
  #held(name: string): string | undefined {
    const local = this.#local.get(name);
    const now = performance.now();
    return local !== undefined && (local.until > now || local.heldUntil > now) ? local.address : undefined;
  }

  /** The fleet's address for `name`, else this process's lookup (written for the fleet); rejects with the lookup's error. */
  async #fetch(name: string): Promise<string> {
    const { redis } = this.#options;
    const stored = await this.#read(name).catch(() => undefined);
    if (stored !== undefined) return stored;
    const answer = await this.#options.lookup(name);
    const [address] = answer.addresses;
    if (address === undefined) throw Object.assign(new Error(`lookup ENODATA ${name}`), { code: 'ENODATA' });
    const ttlMs = Math.round(Math.min(Math.max(answer.ttlMs ?? this.#options.ttlMinMs, this.#options.ttlMinMs), Math.max(this.#options.ttlMinMs, this.#options.ttlMaxMs)));
    try {
      // The first writer wins: a worker that lost the race takes the winner's address.
      const set = await redis.set(this.#key(name), JSON.stringify({ address }), 'PX', ttlMs, 'NX');
      if (set === null) {
        const winner = await this.#read(name);
        if (winner !== undefined) return winner;
      } else {
        await redis.hset(this.hostsKey, name, address);
      }
    } catch {
      // Redis unreachable: this process uses its own answer until the next lookup.
    }
    // Kept locally in every case: the gate holds the address it returns, and a held address must be one remembered.
    this.#remember(name, address, ttlMs);
    return address;
  }

  /** The fleet's entry, kept locally until it expires in Redis. */
  async #read(name: string): Promise<string | undefined> {
    const replies = await this.#options.redis.multi().get(this.#key(name)).pttl(this.#key(name)).exec();
    const json = replies?.[0]?.[1];
    const ttl = Number(replies?.[1]?.[1] ?? -2);
    if (typeof json !== 'string' || ttl <= 0) return undefined;
    let address: unknown;
    try {
      address = (JSON.parse(json) as { address?: unknown }).address;
    } catch {
      return undefined;
    }
    if (typeof address !== 'string' || isIP(address) === 0) return undefined;
    this.#remember(name, address, ttl);
    return address;
  }

  #remember(name: string, address: string, ttlMs: number): void {
    if (this.#local.size >= LOCAL_HOSTS && !this.#local.has(name)) {
      const oldest = this.#local.keys().next();
      if (!oldest.done) this.#local.delete(oldest.value);
    }
    // A renewed entry with the same address keeps the gate's hold on it.
    const previous = this.#local.get(name);
    this.#local.set(name, { address, until: performance.now() + ttlMs, heldUntil: previous?.address === address ? previous.heldUntil : 0 });
  }
}

/**
 * A DNS server's answers that say "no records of this kind" (NXDOMAIN, no
 * data, a query type it does not implement): the other kind is asked. Any
 * other error (a timeout, SERVFAIL, a refused query) is thrown as it is: it
 * says the lookup failed, not that the host has no address.
 */
const NO_ANSWER = new Set(['ENODATA', 'ENOTFOUND', 'ENOTIMP']);

/** How long the system path waits for a record's TTL before using the floor. */
const TTL_PROBE_MS = 1_000;

/**
 * DNS with TTLs. With `servers` (host or host:port): A records, then AAAA,
 * from those servers; a host with neither fails with ENOTFOUND, a lookup
 * that got no answer with its own error (ETIMEOUT, ESERVFAIL...). Without:
 * the system lookup (getaddrinfo, as the fetcher always used: /etc/hosts,
 * nsswitch) gives the address (or its error: ENOTFOUND, EAI_AGAIN...), and a
 * DNS query asked at the same time gives its record's TTL when it answers
 * within a second and agrees (else the floor applies).
 */
export function dnsTtlLookup(options: { readonly servers: readonly string[]; readonly timeoutMs: number }): TtlLookup {
  const own = options.servers.length > 0;
  const resolver = own ? new Resolver({ timeout: Math.max(100, Math.floor(options.timeoutMs / 2)), tries: 2 }) : new Resolver({ timeout: TTL_PROBE_MS, tries: 1 });
  if (own) resolver.setServers([...options.servers]);
  const records = async (kind: 'A' | 'AAAA', host: string): Promise<TtlAnswer | undefined> => {
    try {
      const found = kind === 'A' ? await resolver.resolve4(host, { ttl: true }) : await resolver.resolve6(host, { ttl: true });
      if (found.length === 0) return undefined;
      return { addresses: found.map((record) => record.address), ttlMs: Math.min(...found.map((record) => record.ttl)) * 1000 };
    } catch (error) {
      if (NO_ANSWER.has((error as NodeJS.ErrnoException).code ?? '')) return undefined;
      throw error;
    }
  };
  // AAAA only when A said there are none: after an A query that failed, an AAAA answer
  // would put a host with both on its IPv6 server one time and its IPv4 one the next.
  const fromDns = async (host: string): Promise<TtlAnswer | undefined> => (await records('A', host)) ?? (await records('AAAA', host));
  return async (host) => {
    if (own) {
      const answer = await fromDns(host);
      if (answer !== undefined) return answer;
      const error: NodeJS.ErrnoException = new Error(`queryA ENOTFOUND ${host}`);
      error.code = 'ENOTFOUND';
      throw error;
    }
    let timer: NodeJS.Timeout | undefined;
    const probe = Promise.race([
      fromDns(host).catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), TTL_PROBE_MS))),
    ]).finally(() => clearTimeout(timer));
    const found = await systemLookup(host, { all: true, verbatim: true });
    const addresses = found.map((entry) => entry.address);
    const dns = await probe;
    const agrees = dns !== undefined && addresses[0] !== undefined && dns.addresses.includes(addresses[0]);
    return { addresses, ttlMs: agrees ? dns.ttlMs : undefined };
  };
}

const books = new WeakMap<RedisClient, { readonly key: string; readonly book: AddressBook }>();

/** One address book per Redis connection and DNS settings (a changed definition makes a new one). */
export function addressBookFor(redis: RedisClient, config: CrawlqConfig): AddressBook {
  const key = JSON.stringify([config.namespace, config.dnsServers, config.dnsTtlMin, config.dnsTtlMax, config.lookupTimeout]);
  const known = books.get(redis);
  if (known?.key === key) return known.book;
  const book = new AddressBook({
    redis,
    namespace: config.namespace,
    lookup: dnsTtlLookup({ servers: config.dnsServers, timeoutMs: config.lookupTimeout }),
    ttlMinMs: config.dnsTtlMin,
    ttlMaxMs: config.dnsTtlMax,
  });
  books.set(redis, { key, book });
  return book;
}
