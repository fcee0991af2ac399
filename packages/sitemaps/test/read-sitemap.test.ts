import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { createGzip } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSitemap, SitemapLimitError, SitemapParseError, type OpenSitemap, type SitemapEntry } from '../src/index.js';
import { collect, gzipped, open, sitemapIndex, startSite, urlset, xml, type TestSite } from './support.js';

let site: TestSite;
beforeEach(async () => {
  site = await startSite();
});
afterEach(async () => site.close());

function errorsOf(): { errors: { url: string; error: unknown }[]; onError: (url: string, error: unknown) => void } {
  const errors: { url: string; error: unknown }[] = [];
  return { errors, onError: (url, error) => errors.push({ url, error }) };
}

describe('readSitemap', () => {
  it('reads a plain urlset, normalising and resolving URLs, skipping invalid ones, with each page\'s lastmod and changefreq', async () => {
    const o = site.origin;
    site.routes.set(
      '/sitemap.xml',
      xml(
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
          `<url><loc>${o}/a</loc><lastmod>2024-01-02</lastmod></url>` +
          `<url><loc>HTTP://127.0.0.1:${o.split(':')[2]}/b/../c#frag</loc><changefreq>weekly</changefreq></url>` +
          `<url><loc>relative/page</loc></url>` +
          `<url><loc>javascript:alert(1)</loc></url>` +
          `<url><loc>${o}/d?utm_source=x&amp;id=1</loc></url>` +
          `</urlset>`,
      ),
    );
    const sitemap = `${o}/sitemap.xml`;
    expect(await collect(readSitemap(sitemap, { open }))).toEqual([
      { loc: `${o}/a`, lastmod: '2024-01-02', sitemap },
      { loc: `${o}/c`, changefreq: 'weekly', sitemap },
      { loc: `${o}/relative/page`, sitemap },
      { loc: `${o}/d?id=1`, sitemap },
    ]);
  });

  it('follows an index to a gzipped child, a plain child and a gzip body without .gz name', async () => {
    const o = site.origin;
    site.routes.set('/index.xml', xml(sitemapIndex([`${o}/one.xml.gz`, `${o}/two.xml`, `${o}/three.xml`])));
    site.routes.set('/one.xml.gz', gzipped(urlset([`${o}/1a`, `${o}/1b`])));
    site.routes.set('/two.xml', xml(urlset([`${o}/2a`])));
    site.routes.set('/three.xml', gzipped(urlset([`${o}/3a`])));
    const entries = await collect(readSitemap(`${o}/index.xml`, { open }));
    expect(entries).toEqual([
      { loc: `${o}/1a`, sitemap: `${o}/one.xml.gz` },
      { loc: `${o}/1b`, sitemap: `${o}/one.xml.gz` },
      { loc: `${o}/2a`, sitemap: `${o}/two.xml` },
      { loc: `${o}/3a`, sitemap: `${o}/three.xml` },
    ]);
  });

  it('reports bad children to onError and skips them', async () => {
    const o = site.origin;
    const children = ['truncated.xml', 'html.xml', 'missing.xml', 'corrupt.xml.gz', 'good.xml'].map((name) => `${o}/${name}`);
    site.routes.set('/index.xml', xml(sitemapIndex(children)));
    site.routes.set('/truncated.xml', xml(`<urlset><url><loc>${o}/t1</loc></url><url><loc>${o}/t2`));
    site.routes.set('/html.xml', xml('<html><body>Sorry</body></html>', 'text/html'));
    site.routes.set('/corrupt.xml.gz', xml(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])));
    site.routes.set('/good.xml', xml(urlset([`${o}/g1`])));
    const { errors, onError } = errorsOf();
    const entries = await collect(readSitemap(`${o}/index.xml`, { open, onError }));
    // The truncated child's complete entry came out before its end was found missing.
    expect(entries.map((entry) => entry.loc)).toEqual([`${o}/t1`, `${o}/g1`]);
    expect(errors.map((error) => error.url)).toEqual(children.slice(0, 4));
    expect(errors[0]?.error).toBeInstanceOf(SitemapParseError);
    expect(errors[1]?.error).toBeInstanceOf(SitemapParseError);
    expect(String(errors[2]?.error)).toContain('HTTP 404');
    expect((errors[3]?.error as NodeJS.ErrnoException).code).toMatch(/^Z_/);
  });

  it('rejects when the first document fails', async () => {
    await expect(collect(readSitemap(`${site.origin}/nowhere.xml`, { open }))).rejects.toThrow('HTTP 404');
    site.routes.set('/page.xml', xml('<html></html>'));
    await expect(collect(readSitemap(`${site.origin}/page.xml`, { open }))).rejects.toBeInstanceOf(SitemapParseError);
  });

  it('follows at most maxDepth levels of index, and never the same sitemap twice', async () => {
    const o = site.origin;
    // index0 -> index1 -> index2 -> index3 -> pages; index2 also lists index0 (a cycle).
    site.routes.set('/index0.xml', xml(sitemapIndex([`${o}/index1.xml`])));
    site.routes.set('/index1.xml', xml(sitemapIndex([`${o}/index2.xml`])));
    site.routes.set('/index2.xml', xml(sitemapIndex([`${o}/index3.xml`, `${o}/index0.xml`])));
    site.routes.set('/index3.xml', xml(sitemapIndex([`${o}/pages.xml`])));
    site.routes.set('/pages.xml', xml(urlset([`${o}/deep`])));

    const shallow = errorsOf();
    expect(await collect(readSitemap(`${o}/index0.xml`, { open, maxDepth: 3, onError: shallow.onError }))).toEqual([]);
    expect(site.hits.get('/pages.xml')).toBeUndefined();
    expect(shallow.errors).toHaveLength(1);
    expect(shallow.errors[0]?.url).toBe(`${o}/index3.xml`);
    expect(shallow.errors[0]?.error).toMatchObject({ limit: 'depth', max: 3 });

    const deep = await collect(readSitemap(`${o}/index0.xml`, { open, maxDepth: 4 }));
    expect(deep.map((entry) => entry.loc)).toEqual([`${o}/deep`]);
    expect(site.hits.get('/index0.xml')).toBe(2); // once per read: the cycle was not followed
  });

  it('opens at most maxSitemaps children and reports the limit once', async () => {
    const o = site.origin;
    const names = Array.from({ length: 10 }, (_, index) => `/child${index}.xml`);
    site.routes.set('/index.xml', xml(sitemapIndex(names.map((name) => `${o}${name}`))));
    for (const name of names) site.routes.set(name, xml(urlset([`${o}${name}/page`])));
    const { errors, onError } = errorsOf();
    const entries = await collect(readSitemap(`${o}/index.xml`, { open, maxSitemaps: 3, onError }));
    expect(entries).toHaveLength(3);
    expect(names.filter((name) => site.hits.has(name))).toEqual(names.slice(0, 3));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.error).toBeInstanceOf(SitemapLimitError);
    expect(errors[0]?.error).toMatchObject({ limit: 'sitemaps', max: 3 });
  });

  it('stops after maxUrls', async () => {
    const o = site.origin;
    site.routes.set('/many.xml', xml(urlset(Array.from({ length: 10 }, (_, index) => `${o}/p${index}`))));
    const { errors, onError } = errorsOf();
    const entries = await collect(readSitemap(`${o}/many.xml`, { open, maxUrls: 4, onError }));
    expect(entries.map((entry) => entry.loc)).toEqual([0, 1, 2, 3].map((index) => `${o}/p${index}`));
    expect(errors[0]?.error).toMatchObject({ limit: 'urls', max: 4 });
  });

  it('refuses a gzip bomb beyond maxDocumentBytes', async () => {
    const o = site.origin;
    site.routes.set('/index.xml', xml(sitemapIndex([`${o}/bomb.xml.gz`, `${o}/ok.xml`])));
    site.routes.set('/bomb.xml.gz', gzipped(`<urlset>${' '.repeat(5_000_000)}</urlset>`));
    site.routes.set('/ok.xml', xml(urlset([`${o}/ok`])));
    const { errors, onError } = errorsOf();
    const entries = await collect(readSitemap(`${o}/index.xml`, { open, maxDocumentBytes: 1_000_000, onError }));
    expect(entries.map((entry) => entry.loc)).toEqual([`${o}/ok`]);
    expect(errors[0]).toMatchObject({ url: `${o}/bomb.xml.gz`, error: { limit: 'bytes', max: 1_000_000 } });
  });
});

describe('streaming a 50,000-URL sitemap', () => {
  const COUNT = 50_000;
  const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n';
  const TAIL = '</urlset>\n';
  // ~120 bytes per entry, ~6 MB in all; the hash makes it compress only to ~2 MB.
  const pageUrl = (index: number) =>
    `http://127.0.0.1/pages/${String(index).padStart(8, '0')}/${createHash('sha256').update(String(index)).digest('hex')}`;
  const entry = (index: number) => `<url><loc>${pageUrl(index)}</loc></url>\n`;

  /** Writes the document entry by entry, waiting for 'drain' like any streaming server. */
  async function writeSitemap(response: ServerResponse | NodeJS.WritableStream): Promise<void> {
    const write = (text: string) => (response as NodeJS.WritableStream).write(text);
    write(HEAD);
    // 100 entries (~13 KB) per write: small writes would make the gzip variant slow.
    for (let index = 0; index < COUNT; index += 100) {
      let batch = '';
      for (let offset = index; offset < Math.min(COUNT, index + 100); offset += 1) batch += entry(offset);
      if (!write(batch)) await once(response as NodeJS.WritableStream, 'drain');
    }
    (response as NodeJS.WritableStream).end(TAIL);
  }

  /** Wraps `open` to count the bytes the reader pulled out of the response. */
  function countingOpen(): { open: OpenSitemap; pulled: () => number } {
    let pulled = 0;
    return {
      pulled: () => pulled,
      open: async (url) => {
        const stream = (await open(url)) as AsyncIterable<Buffer>;
        return (async function* () {
          for await (const chunk of stream) {
            pulled += chunk.length;
            yield chunk;
          }
        })();
      },
    };
  }

  async function consume(sitemap: string, reader: ReturnType<typeof countingOpen>): Promise<{ total: number; pulledAfter100: number; last?: SitemapEntry }> {
    let total = 0;
    let pulledAfter100 = 0;
    let last: SitemapEntry | undefined;
    for await (const item of readSitemap(sitemap, { open: reader.open })) {
      total += 1;
      last = item;
      if (total === 100) {
        // A slow consumer: give a reader that reads ahead every chance to do so.
        await new Promise((resolve) => setTimeout(resolve, 300));
        pulledAfter100 = reader.pulled();
      }
    }
    return { total, pulledAfter100, ...(last ? { last } : {}) };
  }

  it('yields every URL while reading only a little ahead of a slow consumer', async () => {
    site.routes.set('/big.xml', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/xml' });
      writeSitemap(response).catch((error: unknown) => response.destroy(error as Error));
    });
    const reader = countingOpen();
    const result = await consume(`${site.origin}/big.xml`, reader);
    expect(result.total).toBe(COUNT);
    expect(result.last?.loc).toBe(pageUrl(COUNT - 1));
    let documentBytes = HEAD.length + TAIL.length;
    for (let index = 0; index < COUNT; index += 1) documentBytes += entry(index).length;
    expect(reader.pulled()).toBe(documentBytes);
    // 100 entries are ~13 KB; the reader may hold a chunk or two beyond them, not megabytes.
    expect(result.pulledAfter100).toBeLessThan(256 * 1024);
  });

  it('closes the connection when reading stops at maxUrls', async () => {
    let served: ServerResponse | undefined;
    site.routes.set('/big.xml', (_request, response) => {
      served = response;
      response.writeHead(200, { 'content-type': 'application/xml' });
      writeSitemap(response).catch(() => undefined); // Fails with the closed connection: expected.
    });
    const { errors, onError } = errorsOf();
    const entries = await collect(readSitemap(`${site.origin}/big.xml`, { open, maxUrls: 10, onError }));
    expect(entries).toHaveLength(10);
    expect(errors[0]?.error).toMatchObject({ limit: 'urls' });
    if (served && !served.closed) await once(served, 'close');
    expect(served?.writableFinished).toBe(false);
  });

  it('does the same through gzip', async () => {
    site.routes.set('/big.xml.gz', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-gzip' });
      const gzip = createGzip();
      gzip.pipe(response);
      writeSitemap(gzip).catch((error: unknown) => response.destroy(error as Error));
    });
    const reader = countingOpen();
    const result = await consume(`${site.origin}/big.xml.gz`, reader);
    expect(result.total).toBe(COUNT);
    expect(result.last?.loc).toBe(pageUrl(COUNT - 1));
    expect(reader.pulled()).toBeGreaterThan(1_500_000);
    expect(result.pulledAfter100).toBeLessThan(256 * 1024);
  });
});
