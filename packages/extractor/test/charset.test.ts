import { describe, expect, it } from 'vitest';
import { decodeBody, extractPage, isHtml } from '@crawlq/extractor';

const URL = 'https://example.com/';
const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');

/** HTML with a title made of raw bytes, so no encoder of ours is trusted. */
function page(head: string, titleBytes: readonly number[]): Buffer {
  return Buffer.concat([ascii(`<html><head>${head}<title>`), Buffer.from(titleBytes), ascii('</title></head></html>')]);
}

const SHIFT_JIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]; // 日本語
const CP1252_QUOTED = [0x93, 0x68, 0x69, 0x94]; // “hi”
const LATIN1_CAFE = [0x63, 0x61, 0x66, 0xe9]; // café
const UTF8_CAFE = [0x63, 0x61, 0x66, 0xc3, 0xa9]; // café

describe('charset detection and decoding', () => {
  it('uses the Content-Type charset parameter', () => {
    const result = extractPage({ body: page('', SHIFT_JIS_NIHONGO), contentType: 'text/html; charset=Shift_JIS', url: URL });
    expect(result.title).toBe('日本語');
    expect(result.charset).toBe('shift_jis');
  });

  it('accepts a quoted charset parameter among others', () => {
    const result = extractPage({
      body: page('', CP1252_QUOTED),
      contentType: 'text/html; foo=bar; CHARSET="windows-1252"',
      url: URL,
    });
    expect(result.title).toBe('\u201chi\u201d');
    expect(result.charset).toBe('windows-1252');
  });

  it('decodes ISO-8859-1 (as its windows-1252 superset)', () => {
    const result = extractPage({ body: page('', LATIN1_CAFE), contentType: 'text/html; charset=ISO-8859-1', url: URL });
    expect(result.title).toBe('café');
    expect(result.charset).toBe('windows-1252');
  });

  it('falls back to <meta charset>', () => {
    const result = extractPage({ body: page('<meta charset="shift_jis">', SHIFT_JIS_NIHONGO), contentType: 'text/html', url: URL });
    expect(result.title).toBe('日本語');
    expect(result.charset).toBe('shift_jis');
  });

  it('falls back to <meta http-equiv="Content-Type">', () => {
    const head = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">';
    const result = extractPage({ body: page(head, CP1252_QUOTED), url: URL });
    expect(result.title).toBe('\u201chi\u201d');
    expect(result.charset).toBe('windows-1252');
  });

  it('ignores a charset inside a comment or another meta content', () => {
    const head = '<!-- <meta charset="shift_jis"> --><meta name="x" content="charset=shift_jis"><meta charset=iso-8859-1>';
    const result = extractPage({ body: page(head, LATIN1_CAFE), url: URL });
    expect(result.title).toBe('café');
  });

  it('prefers a byte order mark over the header', () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), page('', UTF8_CAFE)]);
    const result = extractPage({ body, contentType: 'text/html; charset=iso-8859-1', url: URL });
    expect(result.title).toBe('café');
    expect(result.charset).toBe('utf-8');
  });

  it('decodes UTF-16LE with a BOM', () => {
    const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<title>日本語</title>', 'utf16le')]);
    const result = extractPage({ body, url: URL });
    expect(result.title).toBe('日本語');
    expect(result.charset).toBe('utf-16le');
  });

  it('prefers the header over a meta, and skips an unknown header label', () => {
    const body = page('<meta charset="shift_jis">', LATIN1_CAFE);
    expect(extractPage({ body, contentType: 'text/html; charset=latin1', url: URL }).title).toBe('café');
    const sjis = page('<meta charset="shift_jis">', SHIFT_JIS_NIHONGO);
    expect(extractPage({ body: sjis, contentType: 'text/html; charset=no-such-charset', url: URL }).title).toBe('日本語');
  });

  it('treats a meta naming UTF-16 as UTF-8 and defaults to UTF-8', () => {
    expect(extractPage({ body: page('<meta charset="utf-16">', UTF8_CAFE), url: URL })).toMatchObject({
      title: 'café',
      charset: 'utf-8',
    });
    expect(extractPage({ body: page('', UTF8_CAFE), url: URL })).toMatchObject({ title: 'café', charset: 'utf-8' });
  });

  it('maps every windows-1252 byte 0x80-0x9F per the WHATWG index (Node 20 TextDecoder does not)', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => 0x80 + i));
    const expected = [
      0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
      0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
    ];
    const decoded = decodeBody(bytes, 'text/html; charset=windows-1252');
    expect(decoded.charset).toBe('windows-1252');
    expect(Array.from(decoded.text, (char) => char.codePointAt(0))).toEqual(expected);
    expect(decodeBody(Buffer.from([0x41, 0xa0, 0xe9, 0xff]), 'text/html; charset=us-ascii').text).toBe('A\u00a0\u00e9\u00ff');
  });

  it('replaces undecodable bytes instead of throwing', () => {
    expect(decodeBody(Buffer.from([0x61, 0xff, 0x62])).text).toBe('a\ufffdb');
  });

  it('decodes links in the page encoding before normalising them', () => {
    const body = Buffer.concat([ascii('<a href="/caf'), Buffer.from([0xe9]), ascii('">x</a>')]);
    const result = extractPage({ body, contentType: 'text/html; charset=windows-1252', url: URL });
    expect(result.links).toEqual(['https://example.com/caf%C3%A9']);
  });
});

describe('isHtml', () => {
  it.each([
    ['text/html', true],
    ['text/html; charset=utf-8', true],
    ['Text/HTML ;charset=UTF-8', true],
    ['application/xhtml+xml', true],
    ['APPLICATION/XHTML+XML; charset=utf-8', true],
    ['text/plain', false],
    ['application/json', false],
    ['application/pdf', false],
    ['text/htmlx', false],
    ['image/svg+xml', false],
    ['', false],
    [undefined, false],
  ])('%j -> %s', (contentType, expected) => {
    expect(isHtml(contentType)).toBe(expected);
  });
});
