import type { Readable } from 'node:stream';
import type { RawExchange } from './raw-exchange.js';

/** What {@link AttemptHooks.beforeRetry} is told about the retry about to start. */
export interface RetryInfo {
  /** The URL the retry will request (a redirect hop's URL if the failure happened after a redirect). */
  readonly url: string;
  /** 1 for the first retry, 2 for the second... */
  readonly retryCount: number;
  /** What failed (got's RequestError: HTTPError, TimeoutError, ...). */
  readonly error: unknown;
  /** Status of the failed response, when there was one. */
  readonly status?: number | undefined;
  /** The failed response's `Retry-After`, in ms, when present. */
  readonly retryAfterMs?: number | undefined;
  /** Without a response: whether the attempt timed out or its connection failed (undefined for anything else). */
  readonly failure?: 'timeout' | 'network' | undefined;
}

/** What {@link AttemptHooks.beforeRedirect} is told about the redirect about to be followed. */
export interface RedirectInfo {
  /** The URL that answered with the redirect. */
  readonly from: string;
  /** The absolute URL the redirect leads to (the next request's URL), without user:password. */
  readonly to: string;
  /** The redirect's status (301, 302, 303, 307, 308). */
  readonly status: number;
}

/** Per-fetch hooks into got's attempts; the crawler's per-domain gate plugs in here. */
export interface AttemptHooks {
  /**
   * Called before every retry got makes (not before the first request), after
   * got's backoff/`Retry-After` wait and just before the retry is sent. May wait
   * (e.g. for the domain's next free slot); may throw to abort the retry loop:
   * `fetch()` then rejects with that very error object.
   */
  beforeRetry?(info: RetryInfo): Promise<void>;
  /**
   * Called before got follows each redirect: after the redirect's body was
   * drained, before the next hop is requested (and so before that hop's SSRF
   * check). May wait (e.g. for the target domain's gate); may throw to stop:
   * `fetch()` then rejects with that very error object, without retrying and
   * without requesting `to`. The crawler uses it to claim the target URL in
   * the seen-set, so a page already seen is not fetched again.
   */
  beforeRedirect?(info: RedirectInfo): Promise<void>;
  /**
   * Called last before each attempt's request is made (first request, retries
   * and redirect hops alike, after `beforeRetry` or `beforeRedirect`), once
   * got's own options are settled: the last moment the request can be held
   * back. May wait; may throw to stop: `fetch()` then rejects with that very
   * error object, without retrying. The crawler checks there that the start
   * its gate admitted is still on time, whatever ran since the admission.
   */
  beforeSend?(): Promise<void>;
  /**
   * Called as each attempt's request has been handed to the OS socket (first
   * request, retries and redirect hops alike): the closest a process gets to
   * the moment the server sees it start.
   * Synchronous and must not throw; the crawler checks there whether the start
   * kept to its reserved slot.
   */
  onRequestSent?(): void;
  /**
   * Called as each attempt's response head has arrived (status and headers,
   * before the body): with `onRequestSent`, the time the server took to
   * answer. Synchronous and must not throw.
   */
  onResponseHead?(): void;
}

/** Per-fetch options. */
export interface FetchRequest {
  /** Aborts the fetch; `fetch()` then rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  readonly attemptHooks?: AttemptHooks;
  /**
   * Redirects this fetch may follow, at most the fetcher's `maxRedirects`
   * (a job that continues a chain another job began has fewer left;
   * robots.txt: 5 hops, RFC 9309 2.3.1.2). Over it: `'too-many-redirects'`.
   */
  readonly maxRedirects?: number;
  /**
   * Read at most this many bytes of the (decompressed) body, then stop reading
   * and return them with `truncated: true`, instead of failing over the body
   * cap: for files whose first part is useful on its own (robots.txt, RFC 9309
   * 2.5). Such a fetch makes no got retries; the caller decides when to ask again.
   */
  readonly bodyPrefixBytes?: number;
  /** Keep the final request and response as they crossed the wire (for WARC archives). */
  readonly captureExchange?: boolean;
  /** Extra request headers (a crawler's `beforeRequest` hook, a revisit's If-None-Match / If-Modified-Since); `user-agent`, `accept` and `host` stay crawlq's. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A response, whatever its status (a 404 is a result, not an error). */
export interface FetchResult {
  /** The URL passed to `fetch()`. */
  readonly url: string;
  /** The URL of the response, after redirects. */
  readonly finalUrl: string;
  readonly status: number;
  readonly contentType: string | undefined;
  /**
   * Response headers, `set-cookie` removed. After decompression
   * `content-encoding` and `content-length` are gone too (they described the
   * compressed bytes).
   */
  readonly headers: Record<string, string | string[] | undefined>;
  /** Decompressed body, at most `maxBodyBytes`. */
  readonly body: Buffer;
  readonly bodyBytes: number;
  /** The body was cut at `bodyPrefixBytes` (never set otherwise: over the cap a fetch fails). */
  readonly truncated?: boolean;
  /** Each redirect hop's URL, in order (the final URL is the last one). */
  readonly redirects: readonly string[];
  /** Retries got performed. */
  readonly retries: number;
  /** Wall time of the whole fetch, including retries and their waits, in ms. */
  readonly fetchMs: number;
  /** The final request and response as sent and received; only with `captureExchange`. */
  readonly exchange?: RawExchange;
}

/** Per-fetch options of {@link Fetcher.stream}. */
export type StreamRequest = Pick<FetchRequest, 'signal' | 'attemptHooks' | 'maxRedirects'>;

/** A response whose body is read as it arrives (see {@link Fetcher.stream}). */
export interface StreamedFetchResult extends Pick<FetchResult, 'url' | 'finalUrl' | 'status' | 'contentType' | 'headers' | 'redirects' | 'retries'> {
  /**
   * The decompressed body, as it arrives and with backpressure. Past
   * `maxBodyBytes` it fails with a `PermanentFetchError` (`'body-too-large'`);
   * a network error or timeout while it arrives fails it with a
   * `RetryableFetchError`, an abort with `signal.reason`. Read it to its end
   * or `destroy()` it: its connection stays open until it closes.
   */
  readonly body: Readable;
  /** Wall time until the response head arrived, including retries and their waits, in ms. */
  readonly fetchMs: number;
}

/** An HTTP fetcher owning one got instance and its keep-alive agents. */
export interface Fetcher {
  /**
   * GETs `url`, following redirects and retrying transient failures.
   * Resolves for 2xx, 3xx and 4xx other than 408/429.
   * @throws RetryableFetchError for 408, 429, 5xx (after got's retries), a status line with no HTTP status (`000`), timeouts and network errors (also while reading a body).
   * @throws PermanentFetchError for an invalid or non-http(s) URL, an SSRF-blocked target, a body over the cap, too many redirects.
   * @throws the same error object an `attemptHooks.beforeRetry` or `beforeRedirect` threw.
   * @throws `signal.reason` when the signal aborted the fetch.
   */
  fetch(url: string, request?: FetchRequest): Promise<FetchResult>;
  /**
   * GETs `url` like {@link fetch} (same redirects, SSRF checks, hooks, and
   * retries while no body has been handed out) but resolves as soon as the
   * response head arrives, with the body still streaming. For documents
   * read by a streaming parser (sitemaps): memory stays bounded whatever
   * their size. Resolves and throws as `fetch()` does, except that a body
   * over the cap (when no `Content-Length` announced it) fails the body.
   */
  stream(url: string, request?: StreamRequest): Promise<StreamedFetchResult>;
  /** Destroys the agents (and with them in-flight and pooled sockets). Later fetches fail. Idempotent. */
  close(): void;
}
