import type http from 'node:http';
import type https from 'node:https';
import type { ClientRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import got, { HTTPError, RequestError, TimeoutError } from 'got';
import type { BeforeRequestHook, Options as GotOptions, OptionsInit, PlainResponse, Progress, RetryObject } from 'got';
import { checkLiteralHost, createGuardedLookup, publicAddressesOnly } from './address-guard.js';
import { cappedBody } from './capped-body.js';
import { drainRedirectBody } from './drain-redirect-body.js';
import { noResponseFailure, PermanentFetchError, RetryableFetchError, type RetryableFetchReason } from './errors.js';
import type { FetcherOptions, ResolvedFetcherOptions } from './fetcher-options.js';
import { resolveFetcherOptions } from './fetcher-options.js';
import { keyedAgents } from './keyed-agents.js';
import type { AttemptHooks, Fetcher, FetchRequest, FetchResult, StreamedFetchResult, StreamRequest } from './fetcher-types.js';
import { PolicyViolation } from './errors.js';
import { findPolicyViolation } from './policy-violation.js';
import { ExchangeRecorder, type RawExchange } from './raw-exchange.js';
import {
  backoffDelayMs,
  createCalculateDelay,
  isRetryableStatus,
  parseRetryAfter,
  RETRY_ERROR_CODES,
  RETRY_STATUS_CODES,
} from './retry-policy.js';

/** Key of the per-fetch state in got's `context` (shallow-copied per request, so the object itself survives). */
const STATE_KEY = 'crawlqFetch';

/** Mutable bookkeeping of one `fetch()` call, reachable from got's instance-level hooks. */
class FetchState {
  readonly redirects: string[] = [];
  retries = 0;
  /** Set when the body (or a redirect's drained body) passed the cap. */
  tooLarge = false;
  /** Set when `attemptHooks.beforeRetry` or `beforeRedirect` threw: that object must surface unchanged. */
  hookFailure: { readonly error: unknown } | undefined;
  /** Set once `fetch()` is settled, so a late error cannot start another retry. */
  settled = false;

  constructor(
    readonly url: string,
    readonly hooks: AttemptHooks | undefined,
    readonly maxRedirects: number,
  ) {}
}

/**
 * 'finish': the request has been handed to the OS socket, the closest a
 * process gets to the moment the server sees it start; 'response': its head
 * has arrived.
 */
function watchAttempt(sent: ClientRequest, hooks: AttemptHooks): void {
  if (hooks.onRequestSent) sent.once('finish', () => hooks.onRequestSent?.());
  if (hooks.onResponseHead) sent.once('response', () => hooks.onResponseHead?.());
}

function stateOf(options: Pick<GotOptions, 'context'> | undefined): FetchState | undefined {
  const state = options?.context[STATE_KEY];
  return state instanceof FetchState ? state : undefined;
}

function permanent(url: string, violation: PolicyViolation): PermanentFetchError {
  return new PermanentFetchError({ url, reason: violation.reason, detail: violation.message, cause: violation });
}

/** Validates the initial URL before got sees it. @throws PolicyViolation */
function checkTarget(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PolicyViolation('invalid-url', 'not an absolute URL');
  }
  checkScheme(parsed);
  return parsed.href;
}

function checkScheme(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PolicyViolation('scheme', `scheme ${url.protocol} is not http(s)`);
  }
  // got reads http://unix:/path:/ as a UNIX domain socket request.
  if (url.hostname === 'unix') throw new PolicyViolation('ssrf', 'host "unix" would address a UNIX socket');
}

/**
 * Creates the fetcher of one worker process: ONE got instance over one pair of
 * keep-alive agents, configured once (no per-request `got.extend`). Per-fetch
 * data (hooks, redirect list, counters) travels in got's `context`.
 */
export function createFetcher(options: FetcherOptions = {}): Fetcher {
  const config = resolveFetcherOptions(options);
  return new GotFetcher(config);
}

class GotFetcher implements Fetcher {
  readonly #config: ResolvedFetcherOptions;
  readonly #httpAgent: http.Agent;
  readonly #httpsAgent: https.Agent;
  readonly #got: typeof got;
  #closed = false;

  constructor(config: ResolvedFetcherOptions) {
    this.#config = config;
    const agentOptions = {
      keepAlive: true,
      keepAliveMsecs: config.agent.keepAliveMsecs,
      maxSockets: config.agent.maxSockets,
      maxFreeSockets: config.agent.maxFreeSockets,
      // For keep-alive agents Node applies `timeout` to idle pooled sockets.
      timeout: config.agent.freeSocketTimeoutMs,
      // Reuse the most recently used socket: the least likely to have been closed by the server.
      scheduling: 'lifo' as const,
    };
    const agents = keyedAgents(agentOptions, config.connectionKey);
    this.#httpAgent = agents.http;
    this.#httpsAgent = agents.https;
    this.#got = got.extend(this.#gotOptions());
  }

  #gotOptions(): OptionsInit {
    const config = this.#config;
    const policy = config.allowPrivateNetwork ? undefined : (config.isAddressAllowed ?? publicAddressesOnly);
    const maxBodyBytes = config.maxBodyBytes;
    return {
      agent: { http: this.#httpAgent, https: this.#httpsAgent },
      http2: false,
      decompress: true,
      responseType: 'buffer',
      // Statuses are classified by fetch(), not by got: a 404 is a result. got
      // still retries RETRY_STATUS_CODES with this off (promise API).
      throwHttpErrors: false,
      maxRedirects: config.maxRedirects,
      headers: { 'user-agent': config.userAgent, accept: config.acceptHeader },
      // No cookieJar: no cookies are ever sent or kept.
      timeout: {
        lookup: config.timeouts.lookupMs,
        connect: config.timeouts.connectMs,
        secureConnect: config.timeouts.connectMs,
        response: config.timeouts.responseMs,
        request: config.timeouts.requestMs,
      },
      retry: {
        limit: config.retry.limit,
        methods: ['GET', 'HEAD'],
        statusCodes: [...RETRY_STATUS_CODES],
        errorCodes: [...RETRY_ERROR_CODES],
        maxRetryAfter: config.retry.maxRetryAfterMs,
        noise: 0,
        calculateDelay: createCalculateDelay({
          backoffBaseMs: config.retry.backoffBaseMs,
          backoffMaxMs: config.retry.backoffMaxMs,
          stop: (retry: RetryObject) => {
            const state = stateOf(retry.error.options);
            return this.#closed || state === undefined || state.settled || state.tooLarge || state.hookFailure !== undefined;
          },
        }),
      },
      // Skip the custom lookup entirely when nothing needs it: Node's default is fastest.
      ...(policy !== undefined || config.resolve !== undefined
        ? { dnsLookup: createGuardedLookup({ policy, resolve: config.resolve }) }
        : {}),
      followRedirect: (response: PlainResponse) => {
        // got would reject another scheme itself, but with a generic error; this names the reason.
        const location = response.headers.location;
        if (location !== undefined) {
          let target: URL | undefined;
          try {
            // Same decoding as got's redirect handling, so we judge the URL got will use.
            target = new URL(Buffer.from(location, 'binary').toString(), response.url);
          } catch {
            throw new PolicyViolation('invalid-url', 'redirect Location is not a valid URL');
          }
          checkScheme(target);
        }
        return true;
      },
      hooks: {
        beforeRequest: [
          // Both run for the first request, every retry and every redirect hop.
          ...(policy === undefined
            ? []
            : ([
                // On the exact URL got is about to use. IP literals never reach dnsLookup.
                (requestOptions) => {
                  const { url } = requestOptions;
                  if (url instanceof URL) checkLiteralHost(url.hostname, policy);
                },
              ] satisfies BeforeRequestHook[])),
          // Last: the caller's check runs as close to the socket as a hook gets.
          (async (requestOptions) => {
            const state = stateOf(requestOptions);
            const hooks = state?.hooks;
            if (state === undefined || hooks?.beforeSend === undefined) return;
            try {
              await hooks.beforeSend();
            } catch (hookError) {
              // got wraps this in a RequestError; remember the original for fetch().
              state.hookFailure = { error: hookError };
              throw hookError;
            }
          }) satisfies BeforeRequestHook,
        ],
        beforeRedirect: [
          async (updatedOptions, response) => {
            const state = stateOf(updatedOptions);
            if (state === undefined) return;
            // user:password in a Location would be sent as Basic auth to the
            // hop's host and end up in records: the hop goes out without it.
            updatedOptions.username = '';
            updatedOptions.password = '';
            const to = String(updatedOptions.url);
            state.redirects.push(to);
            // Drained first: the socket goes back to the pool even if the hook stops here.
            await drainRedirectBody(response, {
              maxBytes: maxBodyBytes,
              timeoutMs: config.timeouts.requestMs,
              onTooLarge: () => {
                state.tooLarge = true;
              },
            });
            const hooks = state.hooks;
            if (hooks?.beforeRedirect === undefined) return;
            try {
              await hooks.beforeRedirect({ from: response.url, to, status: response.statusCode });
            } catch (hookError) {
              // got wraps this in a RequestError; remember the original for fetch().
              state.hookFailure = { error: hookError };
              throw hookError;
            }
          },
        ],
        beforeRetry: [
          async (error, retryCount) => {
            const state = stateOf(error.options);
            if (state === undefined) return;
            state.retries = retryCount;
            const hooks = state.hooks;
            if (hooks?.beforeRetry === undefined) return;
            const response = error.response;
            try {
              await hooks.beforeRetry({
                url: String(error.options.url),
                retryCount,
                error,
                status: response?.statusCode,
                retryAfterMs: parseRetryAfter(response?.headers['retry-after']),
                failure: response === undefined ? noResponseFailure(error) : undefined,
              });
            } catch (hookError) {
              // got wraps this in a RequestError; remember the original for fetch().
              state.hookFailure = { error: hookError };
              throw hookError;
            }
          },
        ],
      },
    };
  }

  /** Checks shared by `fetch()` and `stream()` before anything is sent. */
  #begin(url: string, request: StreamRequest): { target: string; state: FetchState } {
    if (this.#closed) {
      throw new RetryableFetchError({ url, code: 'ERR_FETCHER_CLOSED', retries: 0 });
    }
    let target: string;
    try {
      target = checkTarget(url);
    } catch (error) {
      throw error instanceof PolicyViolation ? permanent(url, error) : error;
    }
    request.signal?.throwIfAborted();
    const maxRedirects = Math.max(0, Math.min(request.maxRedirects ?? Number.POSITIVE_INFINITY, this.#config.maxRedirects));
    return { target, state: new FetchState(url, request.attemptHooks, maxRedirects) };
  }

  async fetch(url: string, request: FetchRequest = {}): Promise<FetchResult> {
    const started = performance.now();
    const { target, state } = this.#begin(url, request);
    const { signal } = request;
    if (request.bodyPrefixBytes !== undefined) return this.#fetchPrefix(target, { state, request, started });
    const promise = this.#got(target, {
      context: { [STATE_KEY]: state },
      maxRedirects: state.maxRedirects,
      // Already the instance default; repeated so the result is typed as Buffer.
      responseType: 'buffer',
      ...(signal === undefined ? {} : { signal }),
      ...(request.headers === undefined ? {} : { headers: extraHeaders(request.headers) }),
    });
    const maxBodyBytes = this.#config.maxBodyBytes;
    // got has no body-size limit. Progress is reported per chunk as got reads the
    // DECOMPRESSED stream, so cancelling here stops a gzip bomb early. `total`
    // is Content-Length, known up front for an uncompressed body (for a
    // compressed one got drops it, and the count of transferred bytes decides).
    // on() returns the same promise, awaited below.
    const hooks = request.attemptHooks;
    if (hooks) void promise.on('request', (sent: ClientRequest) => watchAttempt(sent, hooks));
    const recorder = request.captureExchange === true ? new ExchangeRecorder(maxBodyBytes) : undefined;
    if (recorder) void promise.on('request', (sent: ClientRequest) => recorder.watch(sent));
    void promise.on('downloadProgress', (progress: Progress) => {
      if (progress.transferred > maxBodyBytes || (progress.total !== undefined && progress.total > maxBodyBytes)) {
        state.tooLarge = true;
        promise.cancel();
      }
    });

    let response;
    try {
      response = await promise;
    } catch (error) {
      throw this.#translate(error, state, signal);
    } finally {
      state.settled = true;
    }

    return this.#result(state, { response, body: response.body, started, exchange: recorder?.result() });
  }

  /**
   * A fetch that keeps only the first `bodyPrefixBytes` of the body: got's
   * stream API, so the bytes read so far survive stopping (the promise API
   * discards them on cancel). Reading stops at the limit, whatever the declared
   * length or the compression ratio, and the socket is destroyed.
   */
  async #fetchPrefix(target: string, fetch: { state: FetchState; request: FetchRequest; started: number }): Promise<FetchResult> {
    const { state, request, started } = fetch;
    const limit = Math.max(0, Math.floor(request.bodyPrefixBytes ?? 0));
    const { signal } = request;
    const stream = this.#got.stream(target, {
      context: { [STATE_KEY]: state },
      maxRedirects: state.maxRedirects,
      // got's stream API leaves retries to the caller.
      retry: { limit: 0 },
      ...(signal === undefined ? {} : { signal }),
    });
    const hooks = request.attemptHooks;
    if (hooks) stream.on('request', (sent: ClientRequest) => watchAttempt(sent, hooks));
    let response: PlainResponse | undefined;
    stream.once('response', (answer: PlainResponse) => {
      response = answer;
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const room = limit - size;
        if (chunk.length >= room) {
          // Reaching the limit exactly counts as cut: whether more would follow is unknown.
          chunks.push(chunk.subarray(0, room));
          size = limit;
          truncated = true;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
    } catch (error) {
      throw this.#translate(error, state, signal);
    } finally {
      state.settled = true;
      stream.destroy();
    }
    if (response === undefined) throw new RetryableFetchError({ url: state.url, code: 'ERR_NO_RESPONSE', retries: 0 });
    return this.#result(state, { response, body: Buffer.concat(chunks, size), started, truncated });
  }

  /**
   * The error a response's status means, if any: 408, 429 and 5xx are
   * retryable failures, and so is a status line that holds no HTTP status
   * (`000`, parsed as 0): a server that cannot say what it answered is treated
   * like one that did not answer. Shared by `fetch()` and `stream()`.
   */
  #statusFailure(state: FetchState, response: PlainResponse): RetryableFetchError | undefined {
    const { url, retries } = state;
    const status = response.statusCode;
    if (!(status >= 100 && status <= 999)) {
      const detail = `status line ${String(status).padStart(3, '0')} is not an HTTP status`;
      return new RetryableFetchError({ url, code: 'ERR_INVALID_STATUS', reason: 'invalid-status', detail, retries });
    }
    if (isRetryableStatus(status)) {
      return new RetryableFetchError({ url, code: 'ERR_HTTP_STATUS', status, retryAfterMs: parseRetryAfter(response.headers['retry-after']), retries });
    }
    return undefined;
  }

  /** The result of a response read whole or as a prefix, or the error its status means (see #statusFailure). */
  #result(
    state: FetchState,
    read: { response: PlainResponse; body: Buffer; started: number; truncated?: boolean; exchange?: RawExchange | undefined },
  ): FetchResult {
    const { response, body, exchange } = read;
    const { url, retries } = state;
    const failure = this.#statusFailure(state, response);
    if (failure) throw failure;
    const status = response.statusCode;
    const { 'set-cookie': _setCookie, ...headers } = response.headers;
    return {
      ...(exchange === undefined ? {} : { exchange }),
      url,
      finalUrl: response.url,
      status,
      contentType: headers['content-type'],
      headers,
      body,
      bodyBytes: body.length,
      ...(read.truncated === undefined ? {} : { truncated: read.truncated }),
      redirects: state.redirects,
      retries,
      fetchMs: performance.now() - read.started,
    };
  }

  async stream(url: string, request: StreamRequest = {}): Promise<StreamedFetchResult> {
    const started = performance.now();
    const { target, state } = this.#begin(url, request);
    const { signal } = request;
    const maxBodyBytes = this.#config.maxBodyBytes;
    for (;;) {
      // A retry asks again where the failure happened, with the redirects left.
      const attempt = this.#got.stream(state.redirects.at(-1) ?? target, {
        context: { [STATE_KEY]: state },
        maxRedirects: state.maxRedirects - state.redirects.length,
        // got's stream API leaves retries to the caller: see #retryStream.
        retry: { limit: 0 },
        ...(signal === undefined ? {} : { signal }),
      });
      const hooks = state.hooks;
      if (hooks) attempt.on('request', (sent: ClientRequest) => watchAttempt(sent, hooks));
      let response: PlainResponse;
      try {
        response = await responseOf(attempt);
      } catch (error) {
        // A late second error (got's own "aborted") must find a listener.
        attempt.on('error', () => undefined).destroy();
        const failure = this.#translate(error, state, signal);
        const retryable = state.hookFailure === undefined && failure instanceof RetryableFetchError && RETRY_ERROR_CODES.includes(failure.code);
        if (retryable && (await this.#retryStream(state, failure, signal))) continue;
        state.settled = true;
        throw failure;
      }
      const status = response.statusCode;
      const failure = this.#statusFailure(state, response);
      if (failure) {
        attempt.destroy();
        // got's own rule for fetch(): only its listed statuses are retried in-process (a `000` is not).
        if (failure.status !== undefined && RETRY_STATUS_CODES.includes(failure.status) && (await this.#retryStream(state, failure, signal))) continue;
        state.settled = true;
        throw failure;
      }
      const { 'set-cookie': _setCookie, ...headers } = response.headers;
      state.settled = true;
      const tooLarge = () => new PermanentFetchError({ url, reason: 'body-too-large', detail: `body exceeds ${maxBodyBytes} bytes` });
      // Still there only when got does not decompress: the bytes to come, known up front.
      const declared = Number(headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBodyBytes) {
        attempt.destroy();
        throw tooLarge();
      }
      return {
        url,
        finalUrl: response.url,
        status,
        contentType: headers['content-type'],
        headers,
        body: cappedBody(attempt, { maxBytes: maxBodyBytes, tooLarge, translate: (error) => this.#translate(error, state, signal) }),
        redirects: state.redirects,
        retries: state.retries,
        fetchMs: performance.now() - started,
      };
    }
  }

  /**
   * Whether a streamed fetch tries again after `failure` (a retryable status
   * or network error before any body was handed out), as got would for
   * `fetch()`: within the retry limit, after the server's `Retry-After` (not
   * over `maxRetryAfterMs`) or a backoff, then `attemptHooks.beforeRetry`.
   * @throws the error `beforeRetry` threw; `signal.reason` on abort.
   */
  async #retryStream(state: FetchState, failure: RetryableFetchError, signal: AbortSignal | undefined): Promise<boolean> {
    const { retry } = this.#config;
    if (this.#closed || state.retries >= retry.limit || failure.status === 413) return false;
    const retryAfterMs = failure.retryAfterMs;
    if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) return false;
    const retryCount = state.retries + 1;
    await sleep(retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : backoffDelayMs(retryCount, retry), undefined, signal === undefined ? undefined : { signal });
    if (this.#closed) return false;
    state.retries = retryCount;
    await state.hooks?.beforeRetry?.({
      url: state.redirects.at(-1) ?? state.url,
      retryCount,
      error: failure,
      status: failure.status,
      retryAfterMs,
      failure: failure.status === undefined ? noResponseFailure(failure) : undefined,
    });
    return true;
  }

  /** Maps whatever got rejected with to the error `fetch()` promises. */
  #translate(error: unknown, state: FetchState, signal: AbortSignal | undefined): unknown {
    if (state.hookFailure !== undefined) return state.hookFailure.error;
    if (signal?.aborted === true) return signal.reason;
    const { url } = state;
    if (state.tooLarge) {
      return new PermanentFetchError({
        url,
        reason: 'body-too-large',
        detail: `body exceeds ${this.#config.maxBodyBytes} bytes`,
        cause: error,
      });
    }
    const violation = findPolicyViolation(error);
    if (violation !== undefined) return permanent(url, violation);
    if (!(error instanceof RequestError)) return error;
    switch (error.code) {
      case 'ERR_TOO_MANY_REDIRECTS':
        return new PermanentFetchError({
          url,
          reason: 'too-many-redirects',
          detail: `more than ${state.maxRedirects} redirects`,
          cause: error,
        });
      case 'ERR_UNSUPPORTED_PROTOCOL':
        return new PermanentFetchError({ url, reason: 'scheme', detail: error.message, cause: error });
      default: {
        const response = error.response;
        // A response arrived and then reading it failed (reset, timeout, bad
        // gzip): the failure is the code, not the status the response had.
        const timedOut = error instanceof TimeoutError ? timeoutDetail(error) : undefined;
        if (response !== undefined && !(error instanceof HTTPError)) {
          return new RetryableFetchError({
            url,
            code: error.code,
            reason: bodyReadReason(error),
            detail: `reading an HTTP ${response.statusCode} response${timedOut === undefined ? '' : `: ${timedOut}`}`,
            retries: state.retries,
            cause: error,
          });
        }
        return new RetryableFetchError({
          url,
          code: error.code,
          status: response?.statusCode,
          retryAfterMs: parseRetryAfter(response?.headers['retry-after']),
          ...(timedOut === undefined ? {} : { detail: timedOut }),
          retries: state.retries,
          cause: error,
        });
      }
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }
}

/**
 * The phase each of got's timeouts bounds. Every timeout is the same failure
 * reason (`timeout`); the phase in the message tells an operator where the
 * host stalled: its DNS, its TCP listener, its TLS, or its application.
 */
const TIMEOUT_PHASES: Readonly<Record<string, string>> = {
  lookup: 'DNS lookup',
  connect: 'TCP connect',
  secureConnect: 'TLS handshake',
  send: 'sending the request',
  response: 'time to first byte',
  request: 'whole request',
};

/** `TLS handshake: Timeout awaiting 'secureConnect' for 300ms`. */
function timeoutDetail(error: TimeoutError): string {
  const phase = TIMEOUT_PHASES[error.event];
  return phase === undefined ? error.message : `${phase}: ${error.message}`;
}

/** What failed while a response's body was read: zlib and brotli name their errors `Z_…` and `ERR_…BROTLI…`/`ERR__ERROR_…`. */
function bodyReadReason(error: RequestError): RetryableFetchReason {
  if (error instanceof TimeoutError) return 'timeout';
  const code = (error.cause as { code?: unknown } | undefined)?.code ?? error.code;
  if (typeof code === 'string' && (code.startsWith('Z_') || code.includes('BROTLI') || code.startsWith('ERR__ERROR'))) return 'decompression';
  return 'network';
}

/** The final response head of a got stream (after redirects), or its error. */
function responseOf(stream: Readable): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    // Both listeners stay: an error after the head must still find one (the body takes it from there).
    stream.once('response', resolve);
    stream.once('error', reject);
  });
}

/** A caller's headers, without the ones crawlq sets itself (robots.txt is matched against its User-Agent). */
function extraHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower !== 'user-agent' && lower !== 'accept' && lower !== 'host') kept[lower] = value;
  }
  return kept;
}
