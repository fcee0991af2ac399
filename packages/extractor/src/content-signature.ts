import { createHash } from 'node:crypto';
import { load } from 'cheerio/slim';
import { decodeBody } from './decode-body.js';
import { isHtml } from './is-html.js';

/**
 * A 64-bit signature (16 hex digits) of what a page says: for HTML, the text
 * of the document with `ignore` (a CSS selector: ads, clocks, counters),
 * scripts and styles left out, whitespace collapsed; for anything else, the
 * body's bytes. Two fetches with the same signature are the same page for a
 * continuous crawl, whatever changed in the markup around the text.
 */
export function contentSignature(body: Uint8Array, contentType: string | undefined, ignore?: string): string {
  const hash = createHash('sha256');
  if (isHtml(contentType)) {
    const $ = load(decodeBody(body, contentType).text);
    $('script, style, noscript').remove();
    if (ignore !== undefined && ignore !== '') $(ignore).remove();
    hash.update($.root().text().replace(/\s+/g, ' ').trim());
  } else {
    hash.update(body);
  }
  return hash.digest('hex').slice(0, 16);
}
