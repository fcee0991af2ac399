/** One line of the results file: what crawlq learned about one URL. */
export interface PageRecord {
  /** Normalised URL, as enqueued. */
  readonly url: string;
  /** URL after redirects. */
  readonly finalUrl: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly title: string | null;
  readonly description: string | null;
  readonly canonical: string | null;
  readonly lang: string | null;
  /** Absolute URLs found on the page, before scope filtering. */
  readonly links: readonly string[];
  readonly depth: number;
  readonly group: string;
  /**
   * ISO 8601 time the request the group gate admitted went out (the final
   * attempt's first request, not a redirect hop): the start a server counts
   * against the politeness limits.
   */
  readonly requestedAt: string;
  /** ISO 8601 time the response arrived. */
  readonly fetchedAt: string;
  /** Queue-level attempt that produced this record (1 = first). */
  readonly attempts: number;
  /** Requests got retried inside this attempt. */
  readonly retries: number;
  readonly bytes: number;
  readonly timings: {
    /** Waiting for the group's rate, concurrency or pause (not network time). */
    readonly waitMs: number;
    readonly fetchMs: number;
    readonly parseMs: number;
  };
  /** Links this page added to the frontier. */
  readonly enqueued: number;
  /** User-defined fields from the config's `fields` selectors. */
  readonly fields?: Readonly<Record<string, string | readonly string[] | null>>;
}

/**
 * A URL crawlq chose not to fetch: robots.txt disallows it, or it redirects
 * to a page already seen. Recorded, never fetched, never dead-lettered.
 */
export type SkippedRecord = {
  readonly url: string;
  readonly depth: number;
  readonly group: string;
  readonly decidedAt: string;
} & ({ readonly skipped: 'robots'; readonly robotsUrl: string } | { readonly skipped: 'redirect-to-seen'; readonly redirectTo: string; readonly status: number });
