import { describe, expect, it } from 'vitest';
import { capCodePoints, extractPage, RECORD_CAPS } from '@crawlq/extractor';

// nothing one page holds makes its record unbounded. Lengths count code
// points, so an emoji is one and is never cut in half.
const EMOJI = '\u{1F600}'; // two UTF-16 units
const page = (head: string, body = '', fields?: Parameters<typeof extractPage>[0]['fields']) =>
  extractPage({ body: Buffer.from(`<html><head>${head}</head><body>${body}</body></html>`), contentType: 'text/html; charset=utf-8', url: 'http://a.test/', fields });

describe('capCodePoints', () => {
  it('leaves text within the cap alone', () => {
    expect(capCodePoints('abc', 3)).toEqual({ text: 'abc', cut: false });
    expect(capCodePoints(EMOJI.repeat(3), 3)).toEqual({ text: EMOJI.repeat(3), cut: false }); // 6 units, 3 code points
  });

  it('cuts on code points, never inside a surrogate pair', () => {
    expect(capCodePoints('abcdef', 4)).toEqual({ text: 'abcd', cut: true });
    expect(capCodePoints(`a${EMOJI.repeat(5)}`, 3)).toEqual({ text: `a${EMOJI}${EMOJI}`, cut: true });
    const cut = capCodePoints(EMOJI.repeat(10), 7).text;
    expect([...cut]).toHaveLength(7);
    expect(cut.length).toBe(14);
  });

  it('counts a lone surrogate as one code point, as the string iterator does', () => {
    const text = `\uD800x\uDC00${EMOJI}`;
    expect(capCodePoints(text, 3)).toEqual({ text: [...text].slice(0, 3).join(''), cut: true });
  });
});

describe('record caps in extractPage', () => {
  it('keeps a short page as it is, with nothing truncated', () => {
    const result = page('<title>Short</title><meta name="description" content="fine">', '<p class="x">v</p>', [{ name: 'x', selector: '.x' }]);
    expect(result.title).toBe('Short');
    expect(result.truncated).toEqual([]);
  });

  it('cuts a 2 MB emoji title to 1,000 emoji', () => {
    const result = page(`<title>${EMOJI.repeat(500_000)}</title>`);
    expect(result.title).toBe(EMOJI.repeat(RECORD_CAPS.title));
    expect(result.truncated).toEqual(['title']);
  });

  it('keeps a title of exactly the cap, and cuts one code point more', () => {
    expect(page(`<title>${'t'.repeat(1_000)}</title>`).truncated).toEqual([]);
    const over = page(`<title>${'t'.repeat(999)}${EMOJI}${EMOJI}</title>`);
    expect(over.title).toBe(`${'t'.repeat(999)}${EMOJI}`);
    expect(over.truncated).toEqual(['title']);
  });

  it('cuts the description at 2,000 code points', () => {
    const result = page(`<meta name="description" content="${'d'.repeat(50_000)}">`);
    expect(result.description).toHaveLength(RECORD_CAPS.description);
    expect(result.truncated).toEqual(['description']);
  });

  it('cuts each field value at 10,000 code points and an `all` field at 1,000 values', () => {
    const result = page(
      `<title>${'t'.repeat(1_001)}</title>`,
      `<div class="big">${'b'.repeat(30_000)}</div>${'<i class="item">x</i>'.repeat(1_500)}${'<i class="few">y</i>'.repeat(3)}`,
      [
        { name: 'big', selector: '.big' },
        { name: 'items', selector: '.item', all: true },
        { name: 'few', selector: '.few', all: true },
      ],
    );
    expect(result.fields.big).toHaveLength(RECORD_CAPS.fieldValue);
    expect(result.fields.items).toHaveLength(RECORD_CAPS.fieldValues);
    expect(result.fields.few).toEqual(['y', 'y', 'y']);
    expect(result.truncated).toEqual(['title', 'fields.big', 'fields.items']);
  });

  it('an `all` field of exactly 1,000 values is not truncated', () => {
    const result = page('', '<i class="item">x</i>'.repeat(1_000), [{ name: 'items', selector: '.item', all: true }]);
    expect(result.fields.items).toHaveLength(1_000);
    expect(result.truncated).toEqual([]);
  });

  it('cuts a huge lang at 100 code points and drops a canonical URL over 2,048 characters', () => {
    const result = page(`<link rel="canonical" href="/c?${'q'.repeat(1_000_000)}">`, '');
    expect(result.canonical).toBeNull();
    expect(result.truncated).toEqual(['canonical']);
    const lang = extractPage({ body: Buffer.from(`<html lang="${EMOJI.repeat(200_000)}"><title>t</title></html>`), contentType: 'text/html', url: 'http://a.test/' });
    expect(lang.lang).toBe(EMOJI.repeat(RECORD_CAPS.lang));
    expect(lang.truncated).toEqual(['lang']);
  });

  it('keeps a canonical of exactly the cap, and drops one that normalising lengthens past it', () => {
    const prefix = 'http://a.test/c?a=';
    const exact = page(`<link rel="canonical" href="${prefix}${'q'.repeat(RECORD_CAPS.canonical - prefix.length)}">`);
    expect(exact.canonical).toHaveLength(RECORD_CAPS.canonical);
    expect(exact.truncated).toEqual([]);
    // 1,601 characters written, over 2,400 once each space is percent-encoded.
    const encoded = page(`<link rel="canonical" href="/c?a=${'x '.repeat(800)}x">`);
    expect(encoded.canonical).toBeNull();
    expect(encoded.truncated).toEqual(['canonical']);
    expect(page('<link rel="canonical" href="/short">', '').canonical).toBe('http://a.test/short');
  });
});
