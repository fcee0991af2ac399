/** A user-defined value to pull out of every page. */
export interface FieldRule {
  /** Key in `ExtractedPage.fields`. */
  readonly name: string;
  /** CSS selector (cheerio / css-select syntax). */
  readonly selector: string;
  /** Read this attribute instead of the text content. */
  readonly attribute?: string | undefined;
  /**
   * Collect every match as an array (elements without the attribute are
   * skipped) instead of the first match.
   * @default false
   */
  readonly all?: boolean | undefined;
}

/** What `extractPage` found in one HTML document. */
export interface ExtractedPage {
  /** First `<title>` outside SVG, trimmed, whitespace collapsed, at most 1,000 code points; null if absent or blank. */
  readonly title: string | null;
  /** `<meta name="description">` content, trimmed, whitespace collapsed, at most 2,000 code points. */
  readonly description: string | null;
  /** `<link rel="canonical">` as a normalised absolute URL; null when over 2,048 characters once normalised. */
  readonly canonical: string | null;
  /** `<html lang>`, trimmed, at most 100 code points. */
  readonly lang: string | null;
  /**
   * Every `<a href>` and `<area href>`, resolved (honouring `<base href>`),
   * http(s) only, normalised, unique, in document order.
   */
  readonly links: string[];
  /**
   * `links` that may be followed: those with at least one occurrence without
   * `rel="nofollow"`; empty when meta robots says `nofollow` or `none`.
   */
  readonly followLinks: string[];
  /** Meta robots says `noindex` or `none`. */
  readonly noindex: boolean;
  /** The encoding that decoded the body (WHATWG name, e.g. `windows-1252`). */
  readonly charset: string;
  /** One entry per field rule: text or attribute, an array with `all`, null if no match. */
  readonly fields: Record<string, string | string[] | null>;
  /**
   * Hrefs dropped because they could not be normalised (malformed, a host
   * DNS could not resolve, too long). Non-http(s) links (`mailto:`,
   * `javascript:`...) and empty hrefs are dropped without being counted:
   * they are not mistakes.
   */
  readonly invalidLinks: number;
  /**
   * `<a href>`s left unread because `maxLinks` distinct links were already
   * kept (counted as written, not deduplicated); 0 under the cap.
   */
  readonly linksTruncated: number;
  /**
   * What the record caps (`RECORD_CAPS`) shortened, in this order: `title`
   * (over 1,000 code points), `description` (2,000), `fields.NAME` (a value
   * over 10,000, or an `all` field over 1,000 values), `canonical` (over 2,048
   * characters: dropped, not cut), `lang` (over 100). Empty when nothing was cut.
   */
  readonly truncated: string[];
}
