import { InvalidUrlError } from './errors.js';
import type { InvalidUrlReason } from './errors.js';

/** Options for {@link normalizeUrl} and {@link tryNormalizeUrl}. */
export interface NormalizeOptions {
  /**
   * Absolute URL that relative inputs are resolved against (the page a link
   * was found on, or its `<base href>`).
   */
  readonly base?: string | URL | undefined;
  /**
   * Remove tracking query parameters (`utm_*`, `gclid`, `fbclid`, `mc_cid`,
   * `mc_eid`, `msclkid`; names compared case-insensitively).
   * @default true
   */
  readonly stripTracking?: boolean | undefined;
  /**
   * Sort query parameters by name (stable: repeated names keep their order).
   * Off by default because some servers care about parameter order.
   * @default false
   */
  readonly sortQuery?: boolean | undefined;
  /**
   * Longest accepted normalised URL, in UTF-16 code units (all ASCII after
   * normalisation, so also bytes). 2048 is what most servers and CDNs accept.
   * @default 2048
   */
  readonly maxLength?: number | undefined;
}

/** Outcome of {@link tryNormalizeUrl}. */
export type NormalizeResult =
  | { readonly ok: true; readonly url: string }
  | { readonly ok: false; readonly reason: InvalidUrlReason; readonly message: string };

/** @default 2048 (see {@link NormalizeOptions.maxLength}) */
export const DEFAULT_MAX_URL_LENGTH = 2048;

const TRACKING_EXACT = new Set(['gclid', 'fbclid', 'mc_cid', 'mc_eid', 'msclkid']);
// A cheap pre-check so the common query without any tracking parameter is
// returned untouched instead of being split and re-joined.
const TRACKING_HINT = /(?:^|[?&])(?:utm_|gclid|fbclid|mc_cid|mc_eid|msclkid)/i;
const PERCENT_ESCAPE = /%([0-9a-fA-F]{2})/g;
// Labels as DNS can resolve them; `_` is not a hostname character but real
// service names (and some sites) use it, and resolvers pass it through.
const HOST_LABEL = /^[a-z0-9_-]{1,63}$/;

/**
 * Normalises a URL so that equivalent spellings of one resource produce one
 * string (used as the dedupe key, the job id and the group source).
 *
 * Rules, in order:
 * 1. Trim surrounding whitespace; an empty input is refused (`empty`).
 * 2. Resolve against `options.base` when given (relative links), using the
 *    WHATWG URL parser; inputs it rejects, including invalid hosts, are
 *    refused (`malformed`).
 * 3. Only `http` and `https` are accepted (`scheme` otherwise).
 * 4. Scheme and host are lower-cased; internationalised host names become
 *    punycode (`Bücher.example` → `xn--bcher-kva.example`); IPv4 hosts in
 *    other notations become dotted decimal; one trailing dot on the host is
 *    removed (`example.com.` → `example.com`).
 * 5. Hosts DNS could never resolve are refused (`host`): characters other
 *    than letters, digits, `-`, `_`; empty labels; labels over 63 or names
 *    over 253 characters.
 * 6. The default port (80 for http, 443 for https) is removed.
 * 7. The fragment is dropped.
 * 8. User name and password are removed: credentials must never be stored.
 * 9. Percent-encoding is normalised in path and query: escapes of unreserved
 *    characters (`A-Z a-z 0-9 - . _ ~`) are decoded, the hex digits of all
 *    other escapes are upper-cased, and characters that must be escaped are
 *    (the WHATWG parser does that: a space becomes `%20`).
 * 10. Dot segments (`.`, `..`, and their escaped forms) are removed; an
 *     empty path becomes `/`.
 * 11. Tracking parameters are removed (`utm_*`, `gclid`, `fbclid`, `mc_cid`,
 *     `mc_eid`, `msclkid`) unless `stripTracking` is false; empty `&&`
 *     pairs go with them.
 * 12. With `sortQuery`, parameters are sorted by name (stable).
 * 13. A `?` followed by an empty query is dropped.
 * 14. The result may be at most `maxLength` characters (`too-long`).
 *
 * Not done, on purpose: removing `www.`, adding or removing a trailing `/`,
 * changing the case of the path, or decoding `+`, since servers may treat
 * these spellings as different resources.
 *
 * Idempotent: `normalizeUrl(normalizeUrl(x)) === normalizeUrl(x)`.
 *
 * @throws {InvalidUrlError} when the URL is refused (never retryable).
 */
export function normalizeUrl(input: string, options?: NormalizeOptions): string {
  const result = tryNormalizeUrl(input, options);
  if (result.ok) return result.url;
  throw new InvalidUrlError(result.reason, input, { message: result.message });
}

/**
 * Like {@link normalizeUrl} but returns a result instead of throwing, for hot
 * loops over discovered links (no exception is created on the success path).
 */
export function tryNormalizeUrl(input: string, options?: NormalizeOptions): NormalizeResult {
  const trimmed = input.trim();
  if (trimmed === '') return fail('empty', 'URL is empty');

  let url: URL;
  try {
    url = options?.base === undefined ? new URL(trimmed) : new URL(trimmed, options.base);
  } catch {
    // URL.parse (no exception) is Node 22+; on Node 20 the only failure
    // signal is this throw, which happens for bad input only.
    return fail('malformed', 'URL cannot be parsed');
  }

  const protocol = url.protocol;
  if (protocol !== 'http:' && protocol !== 'https:') {
    return fail('scheme', `Scheme ${JSON.stringify(protocol.slice(0, -1).slice(0, 32))} is not http or https`);
  }

  let hostname = url.hostname;
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  const hostProblem = checkHostname(hostname);
  if (hostProblem !== undefined) return fail('host', hostProblem);

  // url.port is '' when it is the scheme's default, so this drops 80/443.
  const host = url.port === '' ? hostname : `${hostname}:${url.port}`;
  const path = normalizePercentEncoding(url.pathname);
  const query = normalizeQuery(normalizePercentEncoding(url.search), options);

  const result = `${protocol}//${host}${path}${query}`;
  const maxLength = options?.maxLength ?? DEFAULT_MAX_URL_LENGTH;
  if (result.length > maxLength) {
    return fail('too-long', `Normalised URL has ${result.length} characters, more than ${maxLength}`);
  }
  return { ok: true, url: result };
}

function fail(reason: InvalidUrlReason, message: string): NormalizeResult {
  return { ok: false, reason, message };
}

/** Returns why a (lower-case, punycode) hostname cannot be resolved, if it cannot. */
function checkHostname(hostname: string): string | undefined {
  // IPv6 literals are bracketed; the parser has validated and compressed them.
  if (hostname.startsWith('[')) return undefined;
  if (hostname.length > 253) return 'Host name is longer than 253 characters';
  for (const label of hostname.split('.')) {
    if (!HOST_LABEL.test(label)) {
      return label === ''
        ? 'Host name has an empty label'
        : 'Host name label is too long or has characters other than letters, digits, "-" and "_"';
    }
  }
  return undefined;
}

function isUnreserved(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x2d || // -
    code === 0x2e || // .
    code === 0x5f || // _
    code === 0x7e // ~
  );
}

/** Decodes escaped unreserved characters and upper-cases the remaining escapes. */
function normalizePercentEncoding(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(PERCENT_ESCAPE, (escape: string, hex: string) => {
    const code = Number.parseInt(hex, 16);
    return isUnreserved(code) ? String.fromCharCode(code) : escape.toUpperCase();
  });
}

/** Takes `url.search` (`''` or `?...`) and returns the query to keep, with its `?`. */
function normalizeQuery(search: string, options: NormalizeOptions | undefined): string {
  if (search === '' || search === '?') return '';
  const stripTracking = options?.stripTracking ?? true;
  const sortQuery = options?.sortQuery ?? false;
  const mayHaveTracking = stripTracking && TRACKING_HINT.test(search);
  if (!mayHaveTracking && !sortQuery) return search;

  let pairs = search.slice(1).split('&').filter((pair) => pair !== '');
  if (mayHaveTracking) pairs = pairs.filter((pair) => !isTrackingParam(paramName(pair)));
  if (sortQuery) {
    // Array.prototype.sort is stable, so repeated names keep their order.
    pairs.sort((a, b) => {
      const nameA = paramName(a);
      const nameB = paramName(b);
      return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
    });
  }
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

function paramName(pair: string): string {
  const equals = pair.indexOf('=');
  return equals === -1 ? pair : pair.slice(0, equals);
}

function isTrackingParam(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('utm_') || TRACKING_EXACT.has(lower);
}
