import { load as loadHtmlparser2 } from 'cheerio/slim';
import type { CheerioAPI } from 'cheerio/slim';
import { tryNormalizeUrl } from '@crawlq/urls';
import type { NormalizeOptions } from '@crawlq/urls';
import { decodeBody } from './decode-body.js';
import type { DomElement, DomNode } from './dom-node.js';
import type { ExtractedPage, FieldRule } from './extracted-page.js';
import { InvalidFieldRuleError } from './errors.js';
import { limitDepth } from './limit-depth.js';
import { parseHtml } from './parse-html.js';
import { RECORD_CAPS, TruncatedFields } from './record-caps.js';
import type { HtmlLoader } from './parse-html.js';
import { scanDocument, textOf } from './scan-document.js';

/** Input of {@link extractPage}. */
export interface ExtractInput {
  /** The raw (decompressed) body bytes. */
  readonly body: Buffer;
  /** The response `Content-Type`; its `charset` parameter picks the decoder. */
  readonly contentType?: string | undefined;
  /** Final URL after redirects: the base for relative links. */
  readonly url: string;
  /** Values to extract besides the built-in ones. */
  readonly fields?: readonly FieldRule[] | undefined;
  /**
   * How links and the canonical URL are normalised (pass the frontier's
   * options so links dedupe the same way). The base is always the page URL
   * or its `<base href>`.
   * @default {} (normalizeUrl's defaults)
   */
  readonly normalize?: Omit<NormalizeOptions, 'base'> | undefined;
  /**
   * Distinct links kept from one page; the `<a href>`s after the cap are only
   * counted (`linksTruncated`), never normalised or stored, so a page with a
   * million links costs what one with `maxLinks` does downstream.
   * @default Infinity
   */
  readonly maxLinks?: number | undefined;
}

// No real link is this long; skipping the URL parser for bigger hrefs keeps a
// hostile page from spending CPU on multi-megabyte attributes.
const MAX_HREF_LENGTH = 65_536;
const WHITESPACE_RUN = /\s+/g;

/**
 * The parser extractPage uses: htmlparser2 through `cheerio/slim` (which
 * also spares loading parse5 and undici). On a 30 KB page with 100 links it
 * ran the full extraction at 530-575 pages/s against 170-225 for parse5
 * (2.4-3.3x over runs on a shared 2-core machine, test/parser-speed.bench.ts)
 * with identical results. It also
 * reads links inside `<noscript>`, which parse5 (scripting on) treats as text.
 */
const defaultHtmlLoader: HtmlLoader = (content) =>
  loadHtmlparser2(content as Parameters<typeof loadHtmlparser2>[0]);

/**
 * Extracts title, meta data, links and user fields from an HTML body. Pure:
 * no network, no I/O. Never throws on hostile or malformed markup (unclosed
 * tags, deep nesting, huge attributes, binary garbage); only an invalid
 * field selector throws. Any body is parsed as HTML: check `isHtml` first.
 *
 * Work stays linear in the page size whatever the nesting: documents with
 * more than 20k open tags are parsed in slices of 5k (see parse-html.ts), and
 * elements nested deeper than 256 levels are flattened (browsers stop
 * nesting at 512) because every selector query costs O(nodes x depth).
 *
 * @throws {InvalidFieldRuleError} when a field rule's selector does not compile.
 */
export function extractPage(input: ExtractInput): ExtractedPage {
  return extractWithLoader(input, defaultHtmlLoader);
}

/** {@link extractPage} with a chosen parser (the speed benchmark compares them). */
export function extractWithLoader(input: ExtractInput, loadHtml: HtmlLoader): ExtractedPage {
  const { text, charset } = decodeBody(input.body, input.contentType);
  const $ = parseHtml(text, loadHtml);
  const root = $.root().get(0) as unknown as DomNode | undefined;
  if (root !== undefined) limitDepth(root);
  const scan = root === undefined ? undefined : scanDocument(root);

  const base = baseUrl(scan?.baseHref, input.url);
  const normalizeOptions: NormalizeOptions = { ...input.normalize, base };
  const nofollowAll = scan?.robotsNofollow ?? false;

  const links: string[] = [];
  const followable = new Set<string>();
  const seen = new Set<string>();
  let invalidLinks = 0;
  let linksTruncated = 0;
  const maxLinks = input.maxLinks ?? Number.POSITIVE_INFINITY;
  for (const { href, nofollow } of scan?.links ?? []) {
    if (links.length >= maxLinks) {
      linksTruncated++;
      continue;
    }
    if (href.length > MAX_HREF_LENGTH) {
      invalidLinks++;
      continue;
    }
    const result = tryNormalizeUrl(href, normalizeOptions);
    if (!result.ok) {
      if (result.reason !== 'scheme' && result.reason !== 'empty') invalidLinks++;
      continue;
    }
    if (!seen.has(result.url)) {
      seen.add(result.url);
      links.push(result.url);
    }
    if (!nofollowAll && !nofollow) followable.add(result.url);
  }

  const truncated = new TruncatedFields();
  const title = truncated.cap('title', collapse(scan?.title), RECORD_CAPS.title);
  const description = truncated.cap('description', collapse(scan?.description), RECORD_CAPS.description);
  const fields = extractFields($, input.fields ?? [], truncated);
  return {
    title,
    description,
    canonical: canonicalOf(scan?.canonicalHref, normalizeOptions, truncated),
    lang: truncated.cap('lang', blankToNull(scan?.lang?.trim()), RECORD_CAPS.lang),
    links,
    // Filter `links` rather than keep a second list so both share one order.
    followLinks: nofollowAll ? [] : links.filter((link) => followable.has(link)),
    noindex: scan?.robotsNoindex ?? false,
    charset,
    fields,
    invalidLinks,
    linksTruncated,
    truncated: truncated.names,
  };
}

/** `<link rel="canonical">` normalised; null when unusable, or too long to keep (then noted in `truncated`). */
function canonicalOf(href: string | undefined, options: NormalizeOptions, truncated: TruncatedFields): string | null {
  if (href === undefined) return null;
  // As for links: a multi-megabyte href is not worth the URL parser's time.
  if (href.length > MAX_HREF_LENGTH) {
    truncated.note('canonical');
    return null;
  }
  const result = tryNormalizeUrl(href, { ...options, maxLength: Math.min(options.maxLength ?? RECORD_CAPS.canonical, RECORD_CAPS.canonical) });
  if (result.ok) return result.url;
  if (result.reason === 'too-long') truncated.note('canonical');
  return null;
}

/** `<base href>` resolved against the page URL; the page URL when absent or unusable. */
function baseUrl(href: string | undefined, pageUrl: string): string {
  if (href === undefined || href.trim() === '') return pageUrl;
  const resolved = tryNormalizeUrl(href, { base: pageUrl });
  // A base with another scheme (or garbage) would turn every relative link
  // into a non-http one; browsers would not navigate through such a base.
  return resolved.ok ? resolved.url : pageUrl;
}

/** Each value capped in length, an `all` field in count (RECORD_CAPS); a cut field is noted in `truncated`. */
function extractFields($: CheerioAPI, rules: readonly FieldRule[], truncated: TruncatedFields): Record<string, string | string[] | null> {
  const fields: Record<string, string | string[] | null> = {};
  for (const rule of rules) {
    let elements: DomElement[];
    try {
      elements = $(rule.selector).get() as unknown as DomElement[];
    } catch (error) {
      throw new InvalidFieldRuleError(rule.name, rule.selector, { cause: error });
    }
    const name = `fields.${rule.name}`;
    const values: string[] = [];
    for (const element of elements) {
      const value =
        rule.attribute === undefined ? textOf(element).trim() : element.attribs[rule.attribute.toLowerCase()];
      if (value === undefined) continue;
      if (values.length === RECORD_CAPS.fieldValues) {
        truncated.note(name); // a value beyond the count cap exists: the rest are dropped unread
        break;
      }
      values.push(truncated.cap(name, value, RECORD_CAPS.fieldValue));
      if (rule.all !== true) break;
    }
    fields[rule.name] = rule.all === true ? values : (values[0] ?? null);
  }
  return fields;
}

function collapse(text: string | undefined): string | null {
  return blankToNull(text?.replace(WHITESPACE_RUN, ' ').trim());
}

function blankToNull(text: string | undefined): string | null {
  return text === undefined || text === '' ? null : text;
}
