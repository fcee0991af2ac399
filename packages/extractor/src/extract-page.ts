import { load as loadHtmlparser2 } from 'cheerio/slim';
import type { CheerioAPI } from 'cheerio/slim';
import { tryNormalizeUrl } from '@crawlq/urls';
import type { NormalizeOptions } from '@crawlq/urls';
import { decodeBody } from './decode-body.js';
import type { ExtractedPage, FieldRule } from './extracted-page.js';
import { InvalidFieldRuleError } from './invalid-field-rule-error.js';

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
   * How links are normalised (pass the frontier's options so links dedupe
   * the same way). `base` is ignored: the page URL or `<base href>` is used.
   * @default {} (normalizeUrl defaults)
   */
  readonly normalize?: Omit<NormalizeOptions, 'base'> | undefined;
}

/** Parses HTML text into a queryable document. */
export type HtmlLoader = (html: string) => CheerioAPI;

// No real link is this long; skipping the URL parser for bigger hrefs keeps a
// hostile page from spending CPU on multi-megabyte attributes.
const MAX_HREF_LENGTH = 65_536;
const WHITESPACE_RUN = /\s+/g;
const ROBOTS_TOKEN_SEPARATOR = /[\s,]+/;

/**
 * The parser extractPage uses: htmlparser2 through `cheerio/slim` (which
 * also spares loading parse5 and undici). On a 30 KB page with 100 links it
 * ran the full extraction at about 550 pages/s against 215 for parse5
 * (2.4-2.6x, test/parser-speed.bench.ts) with identical results. It also
 * reads links inside `<noscript>`, which parse5 (scripting on) treats as text.
 */
export const defaultHtmlLoader: HtmlLoader = (html) => loadHtmlparser2(html);

/**
 * Extracts title, meta data, links and user fields from an HTML body. Pure:
 * no network, no I/O. Never throws on hostile or malformed markup (unclosed
 * tags, deep nesting, huge attributes); only an invalid field selector
 * throws. Call `isHtml(contentType)` first: any body is parsed as HTML.
 *
 * @throws {InvalidFieldRuleError} when a field rule's selector does not compile.
 */
export function extractPage(input: ExtractInput): ExtractedPage {
  return extractWithLoader(input, defaultHtmlLoader);
}

/** {@link extractPage} with a chosen parser (the speed benchmark compares them). */
export function extractWithLoader(input: ExtractInput, loadHtml: HtmlLoader): ExtractedPage {
  const { text, charset } = decodeBody(input.body, input.contentType);
  const $ = loadHtml(text);

  const base = baseUrl($, input.url);
  const normalizeOptions: NormalizeOptions = { ...input.normalize, base };
  const robots = robotsDirectives($);

  const links: string[] = [];
  const followable = new Set<string>();
  const seen = new Set<string>();
  let invalidLinks = 0;
  for (const element of $('a[href], area[href]').get() as unknown as DomElement[]) {
    const href = element.attribs.href ?? '';
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
    if (!robots.nofollow && !hasRelToken(element, 'nofollow')) followable.add(result.url);
  }

  return {
    title: titleOf($),
    description: collapse($('meta[name="description" i]').first().attr('content')),
    canonical: canonicalOf($, normalizeOptions),
    lang: blankToNull($('html').first().attr('lang')?.trim()),
    links,
    // Filter `links` rather than keep a second list so both share one order.
    followLinks: robots.nofollow ? [] : links.filter((link) => followable.has(link)),
    noindex: robots.noindex,
    charset,
    fields: extractFields($, input.fields ?? []),
    invalidLinks,
  };
}

/** The minimal shape of domhandler nodes that this module reads. */
interface DomNode {
  readonly type: string;
  readonly data?: string;
  readonly name?: string;
  readonly children?: readonly DomNode[];
  readonly parent?: DomNode | null;
}

interface DomElement extends DomNode {
  readonly name: string;
  readonly attribs: Readonly<Record<string, string | undefined>>;
}

/** `<base href>` resolved against the page URL; the page URL when absent or unusable. */
function baseUrl($: CheerioAPI, pageUrl: string): string {
  const href = $('base[href]').first().attr('href')?.trim();
  if (href === undefined || href === '') return pageUrl;
  const resolved = tryNormalizeUrl(href, { base: pageUrl });
  // A base with another scheme (or garbage) would turn every relative link
  // into a non-http one; browsers would ignore such a base for navigation.
  return resolved.ok ? resolved.url : pageUrl;
}

function robotsDirectives($: CheerioAPI): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  $('meta[name="robots" i]').each((_, element) => {
    const content = (element as unknown as DomElement).attribs.content ?? '';
    for (const token of content.toLowerCase().split(ROBOTS_TOKEN_SEPARATOR)) {
      if (token === 'noindex' || token === 'none') noindex = true;
      if (token === 'nofollow' || token === 'none') nofollow = true;
    }
  });
  return { noindex, nofollow };
}

function hasRelToken(element: DomElement, token: string): boolean {
  const rel = element.attribs.rel;
  return rel !== undefined && rel.toLowerCase().split(WHITESPACE_RUN).includes(token);
}

function titleOf($: CheerioAPI): string | null {
  for (const element of $('title').get() as unknown as DomElement[]) {
    // An SVG <title> is a tooltip, not the document title.
    if (hasAncestor(element, 'svg')) continue;
    return collapse(textOf(element));
  }
  return null;
}

function canonicalOf($: CheerioAPI, options: NormalizeOptions): string | null {
  const href = $('link[rel~="canonical" i][href]').first().attr('href');
  if (href === undefined) return null;
  const result = tryNormalizeUrl(href, options);
  return result.ok ? result.url : null;
}

function extractFields($: CheerioAPI, rules: readonly FieldRule[]): Record<string, string | string[] | null> {
  const fields: Record<string, string | string[] | null> = {};
  for (const rule of rules) {
    let elements: DomElement[];
    try {
      elements = $(rule.selector).get() as unknown as DomElement[];
    } catch (error) {
      throw new InvalidFieldRuleError(rule.name, rule.selector, { cause: error });
    }
    const values: string[] = [];
    for (const element of elements) {
      const value = rule.attribute === undefined ? textOf(element).trim() : element.attribs[rule.attribute.toLowerCase()];
      if (value === undefined) continue;
      values.push(value);
      if (rule.all !== true) break;
    }
    fields[rule.name] = rule.all === true ? values : (values[0] ?? null);
  }
  return fields;
}

/**
 * Text content of a node, like `.text()` but iterative: a hostile page with
 * thousands of nested elements must not overflow the stack.
 */
function textOf(root: DomNode): string {
  const parts: string[] = [];
  const stack: DomNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === 'text') {
      parts.push(node.data ?? '');
    } else if (node.type !== 'comment' && node.children !== undefined) {
      // Push in reverse so children come off the stack in document order.
      for (let index = node.children.length - 1; index >= 0; index--) {
        const child = node.children[index];
        if (child !== undefined) stack.push(child);
      }
    }
  }
  return parts.join('');
}

function hasAncestor(node: DomNode, name: string): boolean {
  for (let current = node.parent; current !== undefined && current !== null; current = current.parent) {
    if (current.name === name) return true;
  }
  return false;
}

function collapse(text: string | undefined): string | null {
  return blankToNull(text?.replace(WHITESPACE_RUN, ' ').trim());
}

function blankToNull(text: string | undefined): string | null {
  return text === undefined || text === '' ? null : text;
}
