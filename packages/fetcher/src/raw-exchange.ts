import type { ClientRequest, IncomingMessage } from 'node:http';

/** One header line as it went over the wire: name in its original case, value. */
export type RawHeader = readonly [name: string, value: string];

/**
 * The final request and response of a fetch as they crossed the socket, for
 * page archives (WARC): header lines in order and case, and the response body
 * before content decoding (gzip/br stay compressed; chunked framing is already
 * removed by Node, so `Transfer-Encoding` no longer describes `body`).
 */
export interface RawExchange {
  readonly request: {
    readonly method: string;
    /** Request target as sent (path and query). */
    readonly target: string;
    readonly headers: readonly RawHeader[];
  };
  readonly response: {
    readonly httpVersion: string;
    readonly status: number;
    readonly statusText: string;
    readonly headers: readonly RawHeader[];
    readonly body: Buffer;
  };
}

/**
 * Records the wire-level exchange of the LAST request of one fetch (retries and
 * redirect hops replace earlier ones). Listening to the native response's
 * `data` events sees the bytes before got's decompression stream does.
 */
export class ExchangeRecorder {
  #request: RawExchange['request'] | undefined;
  #response: IncomingMessage | undefined;
  #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  watch(sent: ClientRequest): void {
    this.#request = undefined;
    this.#response = undefined;
    this.#chunks = [];
    this.#bytes = 0;
    sent.once('finish', () => {
      this.#request = { method: sent.method, target: sent.path, headers: requestHeaders(sent) };
    });
    sent.once('response', (native: IncomingMessage) => {
      this.#response = native;
      native.on('data', (chunk: Buffer) => {
        // Past the cap the fetch fails anyway; stop keeping bytes.
        if (this.#bytes > this.maxBytes) return;
        this.#chunks.push(chunk);
        this.#bytes += chunk.length;
      });
    });
  }

  /** The exchange, once the response body has been read; undefined if none was seen. */
  result(): RawExchange | undefined {
    const native = this.#response;
    const request = this.#request;
    if (native === undefined || request === undefined) return undefined;
    return {
      request,
      response: {
        httpVersion: native.httpVersion,
        status: native.statusCode ?? 0,
        statusText: native.statusMessage ?? '',
        headers: pairs(native.rawHeaders),
        body: Buffer.concat(this.#chunks),
      },
    };
  }
}

function requestHeaders(sent: ClientRequest): RawHeader[] {
  const headers: RawHeader[] = [];
  for (const name of sent.getRawHeaderNames()) {
    const value = sent.getHeader(name);
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.push([name, String(one)]);
  }
  // Node adds Host itself when it was not set explicitly.
  if (!headers.some(([name]) => name.toLowerCase() === 'host') && sent.host) headers.unshift(['Host', sent.host]);
  return headers;
}

function pairs(raw: readonly string[]): RawHeader[] {
  const headers: RawHeader[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i] ?? '', raw[i + 1] ?? '']);
  return headers;
}
