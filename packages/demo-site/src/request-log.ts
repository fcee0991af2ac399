import { performance } from 'node:perf_hooks';
import { DemoSiteConfigError } from './errors.js';

/** One request the site received. */
export interface RequestRecord {
  /** The site host (listening address) that received it. */
  readonly host: string;
  /** Request target as sent: path and query, e.g. `/p/3`. */
  readonly path: string;
  /** Absolute URL, as `new URL(...).href` spells it (for {@link RequestLog.count}). */
  readonly url: string;
  /** HTTP method, e.g. `GET`. */
  readonly method: string;
  /** Status sent; 0 while no response has been sent (in flight, hang, client left first). */
  readonly status: number;
  /** When the request headers arrived: `performance.timeOrigin + performance.now()`, in ms. */
  readonly startedAt: number;
  /** When the response was handed to the OS or the connection closed (same clock); NaN while in flight. */
  readonly endedAt: number;
  /** True when the connection closed before the response was complete (client timeout, hang, site closed). */
  readonly aborted: boolean;
  /** The `User-Agent` header, if sent. */
  readonly userAgent?: string;
}

/** A record the server is still filling in. */
export type LiveRecord = { -readonly [K in keyof RequestRecord]: RequestRecord[K] };

/** Wall-clock milliseconds with sub-millisecond precision, monotonic within the process. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** The requests a site served, in arrival order, with a count per URL. */
export class RequestLog {
  readonly #records: LiveRecord[] = [];
  readonly #counts = new Map<string, number>();

  /** The live list, in arrival order (`resetRecords` empties this same array). */
  get records(): readonly RequestRecord[] {
    return this.#records;
  }

  /** Records an arriving request; the caller fills in the rest as the response goes out. */
  begin(request: { host: string; path: string; url: string; method: string; userAgent: string | undefined }): LiveRecord {
    const record: LiveRecord = {
      host: request.host,
      path: request.path,
      url: request.url,
      method: request.method,
      status: 0,
      startedAt: now(),
      endedAt: Number.NaN,
      aborted: false,
    };
    if (request.userAgent !== undefined) record.userAgent = request.userAgent;
    this.#records.push(record);
    this.#counts.set(record.url, (this.#counts.get(record.url) ?? 0) + 1);
    return record;
  }

  /**
   * Requests received for `url` (compared after URL parsing, fragment ignored),
   * or for all URLs without an argument.
   * @throws {DemoSiteConfigError} when `url` is not an absolute URL
   */
  count(url?: string): number {
    if (url === undefined) return this.#records.length;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (error) {
      throw new DemoSiteConfigError('url', `${url} is not an absolute URL`, { cause: error });
    }
    parsed.hash = '';
    return this.#counts.get(parsed.href) ?? 0;
  }

  /** Forgets every record (in place, so references to `records` see it too). */
  reset(): void {
    this.#records.length = 0;
    this.#counts.clear();
  }
}

/** Most requests in flight at once, from each request's start and end (a request still open counts to the end). */
export function peakInFlight(requests: readonly Pick<RequestRecord, 'startedAt' | 'endedAt'>[]): number {
  const events = requests.flatMap((request) => [
    { at: request.startedAt, delta: 1 },
    { at: Number.isNaN(request.endedAt) ? Number.POSITIVE_INFINITY : request.endedAt, delta: -1 },
  ]);
  // Ends before starts at the same instant: back-to-back is not overlap.
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let peak = 0;
  for (const event of events) {
    current += event.delta;
    peak = Math.max(peak, current);
  }
  return peak;
}
