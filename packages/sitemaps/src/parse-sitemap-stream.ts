import { Parser } from 'htmlparser2';
import { byteChunks, type ByteSource } from './byte-chunks.js';
import { SitemapLimitError, SitemapParseError } from './errors.js';

/** One `<url>` of a `<urlset>` or one `<sitemap>` of a `<sitemapindex>`. */
export interface SitemapItem {
  /** `url`: a page; `sitemap`: another sitemap (from a sitemap index). */
  readonly kind: 'url' | 'sitemap';
  /** The `<loc>` text, entities decoded, surrounding whitespace trimmed; not checked as a URL. */
  readonly loc: string;
  /** The `<lastmod>` text, trimmed, when present and not empty (not checked as a date: see `parseLastmod`). */
  readonly lastmod?: string;
  /** The `<changefreq>` of a `<url>`, when it is one of the seven values sitemaps.org defines (any case, trimmed); anything else is left out. */
  readonly changefreq?: Changefreq;
}

/** The `<changefreq>` values sitemaps.org defines. */
export const CHANGEFREQS = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
export type Changefreq = (typeof CHANGEFREQS)[number];

/** Options for {@link parseSitemapStream}. */
export interface ParseSitemapOptions {
  /**
   * Largest document, in (decompressed) bytes; beyond it a {@link SitemapLimitError}
   * is thrown. sitemaps.org allows 50 MB uncompressed.
   * @default 52_428_800
   */
  readonly maxBytes?: number;
  /** The document's URL, named in errors. */
  readonly sitemap?: string;
}

/** @default 52_428_800 (50 MiB, the sitemaps.org limit). */
export const DEFAULT_MAX_SITEMAP_BYTES = 50 * 1024 * 1024;

// Longer than any URL worth crawling (normalised URLs stop at 2048); bounds the
// text held for one hostile element.
const MAX_LOC_CHARS = 8192;
const MAX_LASTMOD_CHARS = 64;
// Longer than any value sitemaps.org defines, with room for whitespace around it.
const MAX_CHANGEFREQ_CHARS = 64;
// Sitemaps nest four levels deep; a hundred is already a hostile document.
const MAX_NESTING = 100;
// htmlparser2 keeps the text of a token (comment, tag, processing
// instruction) until the token ends: one longer than this is no sitemap,
// and must not grow to the size of the document.
const MAX_TOKEN_CHARS = 1024 * 1024;

/**
 * Parses one sitemap document (XML bytes, not gzipped) as a stream: yields the
 * `<url>` entries of a `<urlset>` or the `<sitemap>` entries of a
 * `<sitemapindex>` as they are read, without building a tree or holding the
 * document. Pulls the next chunk (at most 16 KiB) only once the entries of the
 * previous one have been consumed, so a slow consumer slows the read.
 *
 * Namespace prefixes are ignored (`<sm:loc>` is `<loc>`), names compare
 * case-insensitively, entities and CDATA are decoded, and only a `<loc>`,
 * `<lastmod>` or `<changefreq>` that is a direct child of the entry counts (so
 * the `<image:loc>` of an `<image:image>` is not taken for the page). A
 * `<changefreq>` is read in a `<url>` only, and kept only when it is one of the
 * sitemaps.org values.
 *
 * @throws {SitemapParseError} when the root element is not `urlset` or
 *   `sitemapindex`, elements are badly nested, or the document ends before
 *   its elements are closed. Entries already yielded stay yielded.
 * @throws {SitemapLimitError} when the document is larger than `maxBytes`.
 */
export async function* parseSitemapStream(
  source: ByteSource,
  options: ParseSitemapOptions = {},
): AsyncGenerator<SitemapItem, void, undefined> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SITEMAP_BYTES;
  const handler = new SitemapHandler(options.sitemap);
  const parser = new Parser(handler, { xmlMode: true, decodeEntities: true });
  // Decodes UTF-8 across chunk boundaries and drops a byte-order mark.
  const decoder = new TextDecoder('utf-8');
  let bytes = 0;
  /** Characters given to the parser, in its index units. */
  let chars = 0;
  for await (const chunk of byteChunks(source)) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      throw new SitemapLimitError('bytes', maxBytes, {
        sitemap: options.sitemap,
        message: `sitemap is larger than ${maxBytes} bytes`,
      });
    }
    const text = decoder.decode(chunk, { stream: true });
    chars += text.length;
    parser.write(text);
    // Entries completed before an error in the same chunk are yielded first.
    yield* handler.take();
    handler.throwIfFailed();
    // `startIndex` is where the token still being read began.
    if (chars - parser.startIndex > MAX_TOKEN_CHARS) {
      const message = `an XML token (tag, comment or declaration) is longer than ${MAX_TOKEN_CHARS} characters`;
      throw new SitemapParseError(options.sitemap === undefined ? message : `${message} (${options.sitemap})`, { sitemap: options.sitemap });
    }
  }
  parser.write(decoder.decode());
  handler.ending = true;
  parser.end();
  yield* handler.take();
  handler.throwIfFailed();
}

/** htmlparser2 callbacks that turn parse events into {@link SitemapItem}s. */
class SitemapHandler {
  /** Set before `parser.end()`: elements closed from then on were never closed in the document. */
  ending = false;
  readonly #sitemap: string | undefined;
  readonly #stack: string[] = [];
  #ready: SitemapItem[] = [];
  #error: SitemapParseError | undefined;
  #parser: Parser | undefined;
  #rootSeen = false;
  /** Parser position at the end of the last open tag, and whether nothing came after it. */
  #openEnd = -1;
  #justOpened = false;
  /** Depth of the open `<url>`/`<sitemap>` element, or -1. */
  #entryDepth = -1;
  #entryKind: SitemapItem['kind'] = 'url';
  #loc: string | undefined;
  #lastmod: string | undefined;
  #changefreq: Changefreq | undefined;
  /** The field whose text is being collected, and its text so far. */
  #field: 'loc' | 'lastmod' | 'changefreq' | undefined;
  #text = '';
  #tooLong = false;

  constructor(sitemap: string | undefined) {
    this.#sitemap = sitemap;
  }

  /** Entries completed since the last call (none are completed after an error). */
  take(): SitemapItem[] {
    const ready = this.#ready;
    this.#ready = [];
    return ready;
  }

  /** Throws the first error found, if any. */
  throwIfFailed(): void {
    if (this.#error !== undefined) throw this.#error;
  }

  onparserinit(parser: Parser): void {
    this.#parser = parser;
  }

  // Comments and processing instructions are ignored, but handled: only a
  // handled token lets htmlparser2 drop the input it has read (without them
  // a document of back-to-back comments would be kept whole).
  oncomment(): void {
    this.#justOpened = false;
  }

  onprocessinginstruction(): void {
    this.#justOpened = false;
  }

  onopentag(name: string): void {
    this.#justOpened = true;
    this.#openEnd = this.#parser?.endIndex ?? -1;
    if (this.#error !== undefined) return;
    const local = localName(name);
    const depth = this.#stack.length;
    this.#stack.push(local);
    if (depth === 0) {
      if (this.#rootSeen) return; // Junk after the root element: ignored.
      this.#rootSeen = true;
      if (local !== 'urlset' && local !== 'sitemapindex') {
        this.#fail(`root element is <${name.slice(0, 64)}>, not <urlset> or <sitemapindex>`);
      }
      return;
    }
    if (depth >= MAX_NESTING) {
      this.#fail(`elements nested more than ${MAX_NESTING} deep`);
      return;
    }
    if (depth === 1 && (local === 'url' || local === 'sitemap')) {
      this.#entryDepth = depth;
      this.#entryKind = local;
      this.#loc = undefined;
      this.#lastmod = undefined;
      this.#changefreq = undefined;
    } else if (this.#entryDepth !== -1 && depth === this.#entryDepth + 1 && (local === 'loc' || local === 'lastmod' || (local === 'changefreq' && this.#entryKind === 'url'))) {
      this.#field = local;
      this.#text = '';
      this.#tooLong = false;
    }
  }

  ontext(text: string): void {
    this.#justOpened = false;
    if (this.#field === undefined || this.#tooLong) return;
    this.#text += text;
    if (this.#text.length > (this.#field === 'loc' ? MAX_LOC_CHARS : this.#field === 'lastmod' ? MAX_LASTMOD_CHARS : MAX_CHANGEFREQ_CHARS)) {
      this.#tooLong = true;
      this.#text = '';
    }
  }

  onclosetag(name: string, isImplied: boolean): void {
    // A close htmlparser2 had to imply: the element was never closed (end of
    // input), or a close tag skipped it (bad nesting). Self-closing elements
    // (`<loc/>`) are implied closes too, but come right after their open tag,
    // at the same position in the input.
    const selfClosing = this.#justOpened && this.#parser?.endIndex === this.#openEnd;
    this.#justOpened = false;
    if (this.#error === undefined && (this.ending || (isImplied && !selfClosing))) {
      this.#fail(this.ending ? `document ends inside <${name.slice(0, 64)}>` : `<${name.slice(0, 64)}> is not closed`);
    }
    const depth = this.#stack.length - 1;
    this.#stack.pop();
    if (this.#error !== undefined) return;
    if (this.#field !== undefined && depth === this.#entryDepth + 1) {
      const value = this.#tooLong ? '' : this.#text.trim();
      // The first <loc> of an entry wins; an empty or oversized one counts as none.
      if (this.#field === 'loc') this.#loc ??= value === '' ? undefined : value;
      else if (this.#field === 'lastmod') this.#lastmod ??= value === '' ? undefined : value;
      else this.#changefreq ??= changefreqOf(value);
      this.#field = undefined;
      this.#text = '';
    } else if (depth === this.#entryDepth) {
      if (this.#loc !== undefined) {
        this.#ready.push({
          kind: this.#entryKind,
          loc: this.#loc,
          ...(this.#lastmod === undefined ? {} : { lastmod: this.#lastmod }),
          ...(this.#changefreq === undefined ? {} : { changefreq: this.#changefreq }),
        });
      }
      this.#entryDepth = -1;
    }
  }

  onend(): void {
    if (this.#error === undefined && !this.#rootSeen) this.#fail('document has no root element');
  }

  #fail(message: string): void {
    this.#error = new SitemapParseError(this.#sitemap === undefined ? message : `${message} (${this.#sitemap})`, {
      sitemap: this.#sitemap,
    });
  }
}

/** A `<changefreq>` text as one of the sitemaps.org values, or undefined (a value it does not define, an empty element). */
function changefreqOf(text: string): Changefreq | undefined {
  const value = text.toLowerCase();
  return CHANGEFREQS.find((known) => known === value);
}

function localName(name: string): string {
  const colon = name.lastIndexOf(':');
  return (colon === -1 ? name : name.slice(colon + 1)).toLowerCase();
}
