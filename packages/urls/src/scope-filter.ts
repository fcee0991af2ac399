import { groupKeyOfParsed } from './group-key.js';
import { InvalidPatternError } from './errors.js';
import { normalizeUrl } from './normalize-url.js';
import { parsePattern, statelessRegExp } from './parse-pattern.js';

/** Which URLs a crawl may visit, relative to its seeds. */
export type ScopeMode = 'host' | 'domain' | 'any';

/** Options for {@link createScopeFilter}. */
export interface ScopeOptions {
  /**
   * - `host`: same host (and non-default port) as any seed;
   * - `domain`: same registrable domain as any seed (subdomains included,
   *   see `groupKeyOf(url, 'domain')`);
   * - `any`: every http(s) URL.
   */
  readonly mode: ScopeMode;
  /** Seed URLs (normalised here, so raw spellings are fine). */
  readonly seeds: readonly string[];
  /**
   * A URL must match at least one of these, when any are given. Strings are
   * globs or `/regex/flags` (see `parsePattern`).
   */
  readonly include?: readonly (string | RegExp)[] | undefined;
  /** A URL matching any of these is out of scope. Same syntax as `include`. */
  readonly exclude?: readonly (string | RegExp)[] | undefined;
}

/**
 * Builds a predicate telling whether a normalised URL is in scope: inside the
 * seeds' hosts or domains (per `mode`), matching an `include` pattern if
 * there are any, and matching no `exclude` pattern. Patterns see the URL as
 * passed, so pass `normalizeUrl` output. URLs that do not parse, or are not
 * http(s), are out of scope; the predicate never throws.
 *
 * @throws {InvalidUrlError} when a seed is not a valid URL.
 * @throws {InvalidPatternError} when a pattern does not compile, or `mode`
 *   is `host` or `domain` with no seeds (nothing could ever match).
 */
export function createScopeFilter(options: ScopeOptions): (url: string) => boolean {
  const { mode } = options;
  const include = (options.include ?? []).map(toRegExp);
  const exclude = (options.exclude ?? []).map(toRegExp);
  const allowed = new Set<string>();
  if (mode !== 'any') {
    if (options.seeds.length === 0) {
      throw new InvalidPatternError('', `Scope mode "${mode}" needs at least one seed`);
    }
    for (const seed of options.seeds) allowed.add(groupKeyOfParsed(new URL(normalizeUrl(seed)), mode));
  }

  return (url: string): boolean => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
    if (mode !== 'any' && !allowed.has(groupKeyOfParsed(parsed, mode))) return false;
    if (include.length > 0 && !include.some((pattern) => pattern.test(url))) return false;
    return !exclude.some((pattern) => pattern.test(url));
  };
}

function toRegExp(pattern: string | RegExp): RegExp {
  return typeof pattern === 'string' ? parsePattern(pattern) : statelessRegExp(pattern);
}
