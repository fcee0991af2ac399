import { RobotsOptionsError } from './errors.js';

// RFC 9309 2.2.1: a product token is letters, '_' and '-' only.
const PRODUCT_TOKEN = /^[A-Za-z_-]+/;

/**
 * The product token of a User-Agent header, lower-cased: `crawlq` from
 * `crawlq/0.1 (+https://example.com/bot)`. robots.txt groups are matched against it.
 *
 * @throws {RobotsOptionsError} when the header does not start with a product token.
 */
export function productTokenOf(userAgent: string): string {
  const token = PRODUCT_TOKEN.exec(userAgent.trim())?.[0];
  if (token === undefined) {
    throw new RobotsOptionsError(
      'userAgent',
      `userAgent ${JSON.stringify(userAgent.slice(0, 100))} does not start with a product token (letters, "_" and "-")`,
    );
  }
  return token.toLowerCase();
}

/**
 * The token a `User-agent:` line names, lower-cased: `*`, or its leading run of
 * letters, `_` and `-` (`Googlebot/2.1` and `googlebot news` both give `googlebot`),
 * as Google's reference parser does. `null` when the line names no token.
 */
export function agentTokenOf(value: string): string | null {
  if (value.startsWith('*')) return '*';
  const token = PRODUCT_TOKEN.exec(value)?.[0];
  return token === undefined ? null : token.toLowerCase();
}
