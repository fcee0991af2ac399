import { InvalidPatternError } from './errors.js';

// `/body/flags` with the flags JavaScript knows; anything else is a glob.
const REGEX_LITERAL = /^\/(.+)\/([dgimsuvy]*)$/s;
const REGEX_SPECIAL = /[.+?^${}()|[\]\\/]/g;

/**
 * Turns a scope pattern into a RegExp:
 * - `/body/flags` is a regular expression, matched anywhere in the URL
 *   unless anchored (`/^https:\/\/example\.com\//`);
 * - anything else is a glob matched against the whole normalised URL: `*`
 *   (and `**`, the same) matches any run of characters, `/` included, and
 *   every other character, `?` included, stands for itself
 *   (`https://example.com/blog/*`).
 *
 * The `g` and `y` flags are dropped: they make `RegExp.test` remember where
 * it stopped, so the same URL would match on one call and not the next.
 *
 * @throws {InvalidPatternError} when a `/regex/` does not compile.
 */
export function parsePattern(text: string): RegExp {
  const literal = REGEX_LITERAL.exec(text);
  if (literal !== null) {
    const [, body = '', flags = ''] = literal;
    try {
      return new RegExp(body, flags.replace(/[gy]/g, ''));
    } catch (error) {
      throw new InvalidPatternError(text, `Invalid regular expression ${JSON.stringify(text)}`, { cause: error });
    }
  }
  const source = text
    .split(/\*+/)
    .map((part) => part.replace(REGEX_SPECIAL, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's');
}

/** Makes a caller-supplied RegExp safe to reuse with `test` (see {@link parsePattern}). */
export function statelessRegExp(pattern: RegExp): RegExp {
  return pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')) : pattern;
}
