export { readSitemap, DEFAULT_MAX_SITEMAP_DEPTH, DEFAULT_MAX_SITEMAPS, DEFAULT_MAX_SITEMAP_URLS } from './read-sitemap.js';
export type { OpenSitemap, ReadSitemapOptions, SitemapEntry } from './read-sitemap.js';
export { parseSitemapStream, CHANGEFREQS, DEFAULT_MAX_SITEMAP_BYTES } from './parse-sitemap-stream.js';
export type { Changefreq, ParseSitemapOptions, SitemapItem } from './parse-sitemap-stream.js';
export { parseLastmod } from './lastmod.js';
export { maybeGunzip } from './maybe-gunzip.js';
export type { ByteSource } from './byte-chunks.js';
export { SitemapError, SitemapLimitError, SitemapParseError } from './errors.js';
export type { SitemapLimit } from './errors.js';
