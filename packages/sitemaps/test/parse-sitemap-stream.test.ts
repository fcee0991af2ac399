import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseSitemapStream, SitemapLimitError, SitemapParseError, type SitemapItem } from '../src/index.js';
import { chunksOf, collect } from './support.js';

const DOC = `\uFEFF<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment with <loc>not this</loc> -->
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <sm:url>
    <sm:loc>
      https://example.com/a?x=1&amp;y=2
    </sm:loc>
    <sm:lastmod> 2024-05-01 </sm:lastmod>
    <image:image><image:loc>https://example.com/img.png</image:loc></image:image>
  </sm:url>
  <sm:url><sm:loc><![CDATA[https://example.com/b?p=<1>&q=2]]></sm:loc></sm:url>
  <sm:url><sm:loc>https://example.com/caf&#233;/&#x31;</sm:loc><sm:lastmod/></sm:url>
  <sm:url><sm:loc>   </sm:loc></sm:url>
  <sm:url><sm:lastmod>2024-01-01</sm:lastmod></sm:url>
  <sm:url><sm:loc>https://example.com/d/über</sm:loc></sm:url>
</sm:urlset>`;

const EXPECTED: SitemapItem[] = [
  { kind: 'url', loc: 'https://example.com/a?x=1&y=2', lastmod: '2024-05-01' },
  { kind: 'url', loc: 'https://example.com/b?p=<1>&q=2' },
  { kind: 'url', loc: 'https://example.com/café/1' },
  { kind: 'url', loc: 'https://example.com/d/über' },
];

describe('parseSitemapStream', () => {
  it('reads a urlset with prefixes, entities, CDATA, whitespace and a BOM; skips entries without loc', async () => {
    expect(await collect(parseSitemapStream(chunksOf(DOC, 64 * 1024)))).toEqual(EXPECTED);
  });

  it('gives the same entries when every byte arrives in its own chunk', async () => {
    // Splits entities, CDATA markers, tag names and multi-byte characters.
    expect(await collect(parseSitemapStream(chunksOf(DOC, 1)))).toEqual(EXPECTED);
  });

  it('reads a sitemap index, and accepts strings as chunks', async () => {
    const strings = Readable.from([
      '<sitemapindex><sitemap><loc>https://e.test/1.xml</loc><lastmod>2024-02-02</lastmod></sitemap>',
      '<sitemap><loc>https://e.test/2.xml.gz</loc></sitemap></sitemapindex>',
    ]);
    expect(await collect(parseSitemapStream(strings))).toEqual([
      { kind: 'sitemap', loc: 'https://e.test/1.xml', lastmod: '2024-02-02' },
      { kind: 'sitemap', loc: 'https://e.test/2.xml.gz' },
    ]);
  });

  it.each([
    ['an HTML page', '<!doctype html><html><body><a href="/x">x</a></body></html>', 'root element is <html>'],
    ['a truncated document', '<urlset><url><loc>https://e.test/1</loc></url><url><loc>https://e.test/2', 'document ends inside'],
    ['badly nested elements', '<urlset><url><loc>https://e.test/1</url></urlset>', 'is not closed'],
    ['no element at all', 'just text, no XML', 'no root element'],
    ['an empty body', '', 'no root element'],
  ])('refuses %s', async (_name, body, message) => {
    const error: unknown = await collect(parseSitemapStream(chunksOf(body, 7))).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SitemapParseError);
    expect((error as Error).message).toContain(message);
  });

  it('yields the complete entries of a truncated document before failing', async () => {
    const items: string[] = [];
    const run = async () => {
      for await (const item of parseSitemapStream(chunksOf('<urlset><url><loc>https://e.test/1</loc></url><url><loc>https://e.test/2', 5))) {
        items.push(item.loc);
      }
    };
    await expect(run()).rejects.toBeInstanceOf(SitemapParseError);
    expect(items).toEqual(['https://e.test/1']);
  });

  it('yields the entries completed before an error in the same chunk', async () => {
    const items: string[] = [];
    const run = async () => {
      const body = '<urlset><url><loc>https://e.test/1</loc></url><url><loc>https://e.test/2</loc></url><url><loc>x</loc></uurl></urlset>';
      for await (const item of parseSitemapStream(chunksOf(body, 64 * 1024))) items.push(item.loc);
    };
    await expect(run()).rejects.toBeInstanceOf(SitemapParseError);
    expect(items).toEqual(['https://e.test/1', 'https://e.test/2']);
  });

  it('reads past many large comments, and refuses one token over 1 MiB instead of holding it', async () => {
    const comments = `<!-- ${'c'.repeat(500_000)} -->`.repeat(8);
    const body = `<urlset><url><loc>https://e.test/1</loc></url>${comments}<url><loc>https://e.test/2</loc></url></urlset>`;
    expect((await collect(parseSitemapStream(chunksOf(body, 16 * 1024)))).map((item) => item.loc)).toEqual(['https://e.test/1', 'https://e.test/2']);

    const items: string[] = [];
    const run = async () => {
      const huge = `<urlset><url><loc>https://e.test/1</loc></url><!-- ${'c'.repeat(3 * 1024 * 1024)} --></urlset>`;
      for await (const item of parseSitemapStream(chunksOf(huge, 16 * 1024))) items.push(item.loc);
    };
    const error: unknown = await run().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SitemapParseError);
    expect((error as Error).message).toContain('longer than 1048576 characters');
    expect(items).toEqual(['https://e.test/1']);
  });

  it('accepts self-closing elements and ignores an oversized loc', async () => {
    const body = `<urlset><url/><url><loc>https://e.test/${'x'.repeat(10_000)}</loc></url><url><loc>https://e.test/ok</loc><lastmod/></url></urlset>`;
    expect(await collect(parseSitemapStream(chunksOf(body, 100)))).toEqual([{ kind: 'url', loc: 'https://e.test/ok' }]);
  });

  it('reads <changefreq> as one of the sitemaps.org values (any case, trimmed) and leaves any other value out', async () => {
    const url = (path: string, inner: string) => `<url><loc>https://e.test/${path}</loc>${inner}</url>`;
    const body =
      '<urlset xmlns:x="urn:x">' +
      url('daily', '<changefreq>daily</changefreq>') +
      url('spaced', '<changefreq>\n  Hourly \n</changefreq><lastmod>2024-05-01</lastmod>') +
      url('never', '<sm:changefreq>NEVER</sm:changefreq>') +
      url('garbage', '<changefreq>sometimes</changefreq>') +
      url('number', '<changefreq>3600</changefreq>') +
      url('empty', '<changefreq/>') +
      url('oversized', `<changefreq>${'weekly '.repeat(20)}</changefreq>`) +
      // The first valid value wins; one nested deeper is not the page's.
      url('first-valid', '<changefreq>bogus</changefreq><changefreq>monthly</changefreq><changefreq>always</changefreq>') +
      url('nested', '<x:meta><changefreq>yearly</changefreq></x:meta>') +
      '</urlset>';
    expect(await collect(parseSitemapStream(chunksOf(body, 3)))).toEqual([
      { kind: 'url', loc: 'https://e.test/daily', changefreq: 'daily' },
      { kind: 'url', loc: 'https://e.test/spaced', lastmod: '2024-05-01', changefreq: 'hourly' },
      { kind: 'url', loc: 'https://e.test/never', changefreq: 'never' },
      { kind: 'url', loc: 'https://e.test/garbage' },
      { kind: 'url', loc: 'https://e.test/number' },
      { kind: 'url', loc: 'https://e.test/empty' },
      { kind: 'url', loc: 'https://e.test/oversized' },
      { kind: 'url', loc: 'https://e.test/first-valid', changefreq: 'monthly' },
      { kind: 'url', loc: 'https://e.test/nested' },
    ]);
    // A sitemap index's entries have no change frequency.
    const index = '<sitemapindex><sitemap><loc>https://e.test/1.xml</loc><changefreq>daily</changefreq></sitemap></sitemapindex>';
    expect(await collect(parseSitemapStream(chunksOf(index, 64)))).toEqual([{ kind: 'sitemap', loc: 'https://e.test/1.xml' }]);
  });

  it('stops at maxBytes', async () => {
    const body = `<urlset>${'<url><loc>https://e.test/x</loc></url>'.repeat(1000)}</urlset>`;
    const error: unknown = await collect(parseSitemapStream(chunksOf(body, 1024), { maxBytes: 10_000 })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SitemapLimitError);
    expect(error).toMatchObject({ limit: 'bytes', max: 10_000 });
  });
});
