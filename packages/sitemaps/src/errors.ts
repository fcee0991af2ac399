import { CrawlqError } from '@crawlq/errors';

/** Base class of the errors `@crawlq/sitemaps` reports; `retryable` says whether trying again may help. */
export class SitemapError extends CrawlqError {
  override readonly name: string = 'SitemapError';
  /** The sitemap URL the error is about, when known. */
  readonly sitemap: string | undefined;

  constructor(message: string, details: { sitemap?: string | undefined; retryable: boolean; cause?: unknown }) {
    super(message, { retryable: details.retryable, cause: details.cause });
    this.sitemap = details.sitemap;
  }
}

/** The document is not a well-formed sitemap (wrong root element, truncated, badly nested). Not retryable. */
export class SitemapParseError extends SitemapError {
  override readonly name = 'SitemapParseError';

  constructor(message: string, details: { sitemap?: string | undefined; cause?: unknown } = {}) {
    super(message, { ...details, retryable: false });
  }
}

/** Which bound of `readSitemap` or `parseSitemapStream` was reached. */
export type SitemapLimit = 'depth' | 'sitemaps' | 'urls' | 'bytes';

/** A configured bound was reached; what lies beyond it was skipped. Not retryable. */
export class SitemapLimitError extends SitemapError {
  override readonly name = 'SitemapLimitError';
  /** The bound that was reached. */
  readonly limit: SitemapLimit;
  /** Its configured value. */
  readonly max: number;

  constructor(limit: SitemapLimit, max: number, details: { sitemap?: string | undefined; message?: string } = {}) {
    super(details.message ?? `sitemap ${limit} limit of ${max} reached`, { sitemap: details.sitemap, retryable: false });
    this.limit = limit;
    this.max = max;
  }
}
