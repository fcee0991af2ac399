/** Keep-alive agent settings, shared by every fetch of one {@link Fetcher}. */
export interface AgentOptions {
  /** Maximum concurrent sockets per host:port. @default 64 */
  readonly maxSockets?: number;
  /** Maximum idle sockets kept per host:port. @default 16 */
  readonly maxFreeSockets?: number;
  /** TCP keep-alive initial delay for idle sockets, in ms. @default 1000 */
  readonly keepAliveMsecs?: number;
  /** An idle pooled socket is closed after this many ms. @default 15000 */
  readonly freeSocketTimeoutMs?: number;
}

/** Per-phase timeouts (got's `timeout` option). Each one ends the attempt with `ETIMEDOUT`. */
export interface TimeoutOptions {
  /** DNS resolution of a new connection. @default 5000 */
  readonly lookupMs?: number;
  /** TCP connect of a new connection. @default 10000 */
  readonly connectMs?: number;
  /** From the request being sent to the response headers (time to first byte). @default 15000 */
  readonly responseMs?: number;
  /**
   * One HTTP exchange, from sending the request to the end of its body (got's
   * `timeout.request`). It restarts for each redirect hop and each retry; it also
   * bounds draining a redirect's body.
   * @default 30000
   */
  readonly requestMs?: number;
}

/** got's in-process retries (GET/HEAD only). */
export interface RetryOptions {
  /** Retries after the first request; 0 disables them. @default 2 */
  readonly limit?: number;
  /** Backoff before retry n (1-based) is uniformly random in [0, min(backoffMaxMs, backoffBaseMs * 2^(n-1))]. @default 500 */
  readonly backoffBaseMs?: number;
  /** Upper bound of the backoff ceiling. @default 10000 */
  readonly backoffMaxMs?: number;
  /**
   * A `Retry-After` up to this long is waited for; a longer one ends got's retries
   * and `fetch()` throws a `RetryableFetchError` carrying `retryAfterMs`, so the
   * queue can reschedule (and the crawler can pause the domain).
   * @default 30000
   */
  readonly maxRetryAfterMs?: number;
}

/**
 * Decides whether a connection to `address` may be made for a URL whose host is
 * `host` (a hostname, or the IP literal itself). Replaces the default policy
 * (public addresses only) when `allowPrivateNetwork` is false.
 */
export type AddressPolicy = (address: string, host: string) => boolean;

/** Resolves a hostname to IP addresses (IPv4 and/or IPv6), replacing `node:dns` lookup. */
export type HostResolver = (hostname: string) => Promise<readonly string[]>;

/** Options of {@link createFetcher}. Every field is optional. */
export interface FetcherOptions {
  /** `User-Agent` header. @default 'crawlq/0.1 (+https://github.com/crawlq/crawlq)' */
  readonly userAgent?: string;
  /** `Accept` header. @default 'text/html,application/xhtml+xml,application/xml;q=0.9,*\/*;q=0.8' */
  readonly acceptHeader?: string;
  readonly agent?: AgentOptions;
  readonly timeouts?: TimeoutOptions;
  readonly retry?: RetryOptions;
  /** Cap on the body size AFTER decompression; over it the fetch fails with `'body-too-large'`. @default 10485760 (10 MiB) */
  readonly maxBodyBytes?: number;
  /** Redirects followed before failing with `'too-many-redirects'`. @default 10 */
  readonly maxRedirects?: number;
  /**
   * Skip the SSRF guard: allow loopback, private, link-local and other non-public
   * targets. For tests and trusted intranet crawls only.
   * @default false
   */
  readonly allowPrivateNetwork?: boolean;
  /**
   * Overrides the SSRF address policy (default: only public addresses). Ignored
   * when `allowPrivateNetwork` is true. Useful to allow one known intranet host.
   * @default undefined (public addresses only)
   */
  readonly isAddressAllowed?: AddressPolicy;
  /**
   * Custom DNS resolution, used for every new connection to a hostname (never for
   * IP literals). For tests (map a name to 127.0.0.1 without touching DNS) and for
   * custom or caching resolvers. Resolved addresses still pass the SSRF policy.
   * @default undefined (node:dns lookup, i.e. getaddrinfo)
   */
  readonly resolve?: HostResolver;
  /**
   * Pooled keep-alive sockets are also keyed by this (say, the address `resolve`
   * currently gives the host): when it changes, the next request opens a new
   * connection rather than reusing one to the old address.
   * @default undefined (sockets keyed by host and port, as Node does)
   */
  readonly connectionKey?: ConnectionKey;
}

/** A pool key part for a hostname; undefined adds nothing. Must be quick (called for every request). */
export type ConnectionKey = (hostname: string) => string | undefined;

/** {@link FetcherOptions} with every default applied. */
export interface ResolvedFetcherOptions {
  readonly userAgent: string;
  readonly acceptHeader: string;
  readonly agent: Required<AgentOptions>;
  readonly timeouts: Required<TimeoutOptions>;
  readonly retry: Required<RetryOptions>;
  readonly maxBodyBytes: number;
  readonly maxRedirects: number;
  readonly allowPrivateNetwork: boolean;
  readonly isAddressAllowed: AddressPolicy | undefined;
  readonly resolve: HostResolver | undefined;
  readonly connectionKey: ConnectionKey | undefined;
}

/** Default `User-Agent`. */
export const DEFAULT_USER_AGENT = 'crawlq/0.1 (+https://github.com/crawlq/crawlq)';
/** Default `Accept`. */
export const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

function check(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`FetcherOptions.${name} must be a finite number >= ${min}, got ${value}`);
  }
  return value;
}

/** Applies defaults and validates numbers. @throws RangeError on a nonsensical value. */
export function resolveFetcherOptions(options: FetcherOptions = {}): ResolvedFetcherOptions {
  const agent = options.agent ?? {};
  const timeouts = options.timeouts ?? {};
  const retry = options.retry ?? {};
  return {
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    acceptHeader: options.acceptHeader ?? DEFAULT_ACCEPT,
    agent: {
      maxSockets: check('agent.maxSockets', agent.maxSockets ?? 64, 1),
      maxFreeSockets: check('agent.maxFreeSockets', agent.maxFreeSockets ?? 16, 0),
      keepAliveMsecs: check('agent.keepAliveMsecs', agent.keepAliveMsecs ?? 1000, 0),
      freeSocketTimeoutMs: check('agent.freeSocketTimeoutMs', agent.freeSocketTimeoutMs ?? 15_000, 1),
    },
    timeouts: {
      lookupMs: check('timeouts.lookupMs', timeouts.lookupMs ?? 5000, 1),
      connectMs: check('timeouts.connectMs', timeouts.connectMs ?? 10_000, 1),
      responseMs: check('timeouts.responseMs', timeouts.responseMs ?? 15_000, 1),
      requestMs: check('timeouts.requestMs', timeouts.requestMs ?? 30_000, 1),
    },
    retry: {
      limit: Math.floor(check('retry.limit', retry.limit ?? 2, 0)),
      backoffBaseMs: check('retry.backoffBaseMs', retry.backoffBaseMs ?? 500, 0),
      backoffMaxMs: check('retry.backoffMaxMs', retry.backoffMaxMs ?? 10_000, 0),
      maxRetryAfterMs: check('retry.maxRetryAfterMs', retry.maxRetryAfterMs ?? 30_000, 0),
    },
    maxBodyBytes: check('maxBodyBytes', options.maxBodyBytes ?? 10 * 1024 * 1024, 0),
    maxRedirects: Math.floor(check('maxRedirects', options.maxRedirects ?? 10, 0)),
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    isAddressAllowed: options.isAddressAllowed,
    resolve: options.resolve,
    connectionKey: options.connectionKey,
  };
}
