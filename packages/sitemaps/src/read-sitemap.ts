import { normalizeUrl, tryNormalizeUrl, type NormalizeOptions } from '@crawlq/urls';
import { byteChunks, type ByteSource } from './byte-chunks.js';
import { SitemapError, SitemapLimitError } from './errors.js';
import { maybeGunzip } from './maybe-gunzip.js';
import { DEFAULT_MAX_SITEMAP_BYTES, parseSitemapStream, type Changefreq } from './parse-sitemap-stream.js';

/** A page URL found in a sitemap. */
export interface SitemapEntry {
  /** The page URL, normalised (`@crawlq/urls`). */
  readonly loc: string;
  /** Its `<lastmod>`, as written (see `parseLastmod`). */
  readonly lastmod?: string;
  /** Its `<changefreq>`, when it is one of the sitemaps.org values. */
  readonly changefreq?: Changefreq;
  /** The (normalised) URL of the sitemap file it came from. */
  readonly sitemap: string;
}

/**
 * The caller's streaming fetch: resolves to the response body once the status
 * is known, and throws for a failed request or a non-2xx status. Decompressing
 * gzip is not needed (it is detected by its magic bytes).
 */
export type OpenSitemap = (url: string) => Promise<NodeJS.ReadableStream | ByteSource>;

/** Options for {@link readSitemap}. */
export interface ReadSitemapOptions {
  /** Opens a sitemap URL as a byte stream; see {@link OpenSitemap}. */
  readonly open: OpenSitemap;
  /**
   * Levels of sitemap index followed below the first document (0: read only it).
   * @default 3
   */
  readonly maxDepth?: number;
  /**
   * Child sitemaps opened at most, over all levels (the first document not counted).
   * @default 1000
   */
  readonly maxSitemaps?: number;
  /**
   * Page URLs yielded at most; reading stops there.
   * @default 1_000_000
   */
  readonly maxUrls?: number;
  /**
   * Largest document in bytes after decompression (guards against gzip bombs).
   * @default 52_428_800 (50 MiB, the sitemaps.org limit)
   */
  readonly maxDocumentBytes?: number;
  /** How page and sitemap URLs are normalised; `@crawlq/urls` defaults when absent. */
  readonly normalize?: Omit<NormalizeOptions, 'base'>;
  /**
   * Told about each child sitemap that failed (its error from `open`, a
   * {@link SitemapParseError}, a `bytes` {@link SitemapLimitError}) and then
   * skipped, and about limits reached (`depth`, `sitemaps`, `urls`: once each,
   * with the sitemap where it was reached). Entries a failing child yielded
   * before its error stay yielded.
   */
  readonly onError?: (url: string, error: unknown) => void;
}

/** @default 3 */
export const DEFAULT_MAX_SITEMAP_DEPTH = 3;
/** @default 1000 */
export const DEFAULT_MAX_SITEMAPS = 1000;
/** @default 1_000_000 */
export const DEFAULT_MAX_SITEMAP_URLS = 1_000_000;

/**
 * Yields the page URLs of a sitemap, following sitemap index entries.
 *
 * Documents are streamed (see `parseSitemapStream`): the iterator reads only
 * as fast as it is consumed, and stopping early closes the open stream. The
 * children of an index are read after the index itself, in document order,
 * each URL at most once. Page and sitemap URLs are normalised and resolved
 * against their sitemap's URL; entries that are not valid http(s) URLs are
 * skipped without report. Scope (same host as the sitemap or not) is the
 * caller's decision.
 *
 * A failing child sitemap is reported to `onError` and skipped. A failing
 * first document rejects the iteration with its error (the one `open` threw,
 * or a {@link SitemapError}).
 *
 * @throws {InvalidUrlError} when `url` is not a valid http(s) URL.
 */
export async function* readSitemap(url: string, options: ReadSitemapOptions): AsyncGenerator<SitemapEntry, void, undefined> {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_SITEMAP_DEPTH;
  const maxSitemaps = options.maxSitemaps ?? DEFAULT_MAX_SITEMAPS;
  const maxUrls = options.maxUrls ?? DEFAULT_MAX_SITEMAP_URLS;
  const maxBytes = options.maxDocumentBytes ?? DEFAULT_MAX_SITEMAP_BYTES;
  const root = normalizeUrl(url, options.normalize);
  const seen = new Set([root]);
  const reported = new Set<SitemapLimitError['limit']>();
  let children = 0;
  let yielded = 0;
  let stopped = false;

  const report = (where: string, error: unknown): void => options.onError?.(where, error);
  const reportLimit = (where: string, error: SitemapLimitError): void => {
    if (reported.has(error.limit)) return;
    reported.add(error.limit);
    report(where, error);
  };

  async function* walk(sitemap: string, depth: number): AsyncGenerator<SitemapEntry, void, undefined> {
    const next: string[] = [];
    const body = await options.open(sitemap);
    const bytes = maybeGunzip(byteChunks(asByteSource(body, sitemap)));
    for await (const item of parseSitemapStream(bytes, { maxBytes, sitemap })) {
      const resolved = tryNormalizeUrl(item.loc, { ...options.normalize, base: sitemap });
      if (!resolved.ok) continue;
      if (item.kind === 'url') {
        if (yielded >= maxUrls) {
          stopped = true;
          reportLimit(sitemap, new SitemapLimitError('urls', maxUrls, { sitemap }));
          return;
        }
        yielded += 1;
        yield {
          loc: resolved.url,
          ...(item.lastmod === undefined ? {} : { lastmod: item.lastmod }),
          ...(item.changefreq === undefined ? {} : { changefreq: item.changefreq }),
          sitemap,
        };
      } else if (!seen.has(resolved.url)) {
        if (depth + 1 > maxDepth) {
          reportLimit(sitemap, new SitemapLimitError('depth', maxDepth, { sitemap }));
        } else if (children + next.length >= maxSitemaps) {
          reportLimit(sitemap, new SitemapLimitError('sitemaps', maxSitemaps, { sitemap }));
        } else {
          seen.add(resolved.url);
          next.push(resolved.url);
        }
      }
    }
    for (const child of next) {
      if (stopped) return;
      children += 1;
      try {
        yield* walk(child, depth + 1);
      } catch (error) {
        report(child, error);
      }
    }
  }

  yield* walk(root, 0);
}

function asByteSource(body: NodeJS.ReadableStream | ByteSource, sitemap: string): ByteSource {
  if (typeof body === 'object' && body !== null && Symbol.asyncIterator in body) return body as ByteSource;
  throw new SitemapError(`open() returned neither a stream nor an async iterable for ${sitemap}`, { sitemap, retryable: false });
}
