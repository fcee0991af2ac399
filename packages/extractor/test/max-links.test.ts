import { describe, expect, it } from 'vitest';
import { extractPage } from '@crawlq/extractor';

describe('maxLinks', () => {
  const anchors = (count: number) => Array.from({ length: count }, (_, i) => `<a href="/p/${i}">${i}</a>`).join('');
  const page = (body: string) => extractPage({ body: Buffer.from(`<html><body>${body}</body></html>`), contentType: 'text/html', url: 'http://a.test/', maxLinks: 10 });

  it('keeps the first maxLinks distinct links and counts the rest', () => {
    const result = page(anchors(25));
    expect(result.links).toEqual(Array.from({ length: 10 }, (_, i) => `http://a.test/p/${i}`));
    expect(result.followLinks).toHaveLength(10);
    expect(result.linksTruncated).toBe(15);
  });

  it('counts duplicates and dropped hrefs toward nothing but the distinct links kept', () => {
    const result = page(`${anchors(5)}${anchors(5)}<a href="mailto:x@a.test">m</a>${anchors(10)}`);
    expect(result.links).toHaveLength(10);
    expect(result.linksTruncated).toBe(0);
  });
});
