import { CrawlqError } from '@crawlq/errors';
import { redactText } from './redact-url.js';

/**
 * Why a URL was refused:
 * - `empty`: nothing left after trimming whitespace;
 * - `malformed`: the WHATWG URL parser rejects it (including hosts it rejects);
 * - `scheme`: a scheme other than `http` or `https` (`mailto:`, `javascript:`, `ftp:`...);
 * - `too-long`: the normalised URL is longer than `maxLength`;
 * - `host`: the parser accepts the host but DNS could never resolve it
 *   (characters outside letters, digits, `-` and `_`, an empty label, a label
 *   over 63 or a name over 253 characters).
 */
export type InvalidUrlReason = 'empty' | 'malformed' | 'scheme' | 'too-long' | 'host';

/**
 * A URL that cannot be crawled. Never retryable: the same input fails the
 * same way every time, so jobs carrying it are permanent failures.
 */
export class InvalidUrlError extends CrawlqError {
  override readonly name = 'InvalidUrlError';
  /** Which rule refused the URL. */
  readonly reason: InvalidUrlReason;
  /**
   * The input as given, cut to 200 characters so a hostile megabyte-long
   * "URL" does not end up in every log line.
   */
  readonly input: string;

  constructor(reason: InvalidUrlReason, input: string, options?: { message?: string; cause?: unknown }) {
    // Redacted first: a URL refused for its scheme or length may still carry a password.
    const redacted = redactText(input);
    const shown = redacted.length > 200 ? `${redacted.slice(0, 200)}…` : redacted;
    // Retrying cannot help: normalisation is a pure function of the input.
    super(options?.message ?? `Invalid URL (${reason}): ${JSON.stringify(shown)}`, { retryable: false, cause: options?.cause });
    this.reason = reason;
    this.input = shown;
  }
}

/**
 * A scope pattern or scope option that cannot be used (a `/regex/` that does
 * not compile, a host or domain scope without seeds). A configuration
 * mistake: never retryable.
 */
export class InvalidPatternError extends CrawlqError {
  override readonly name = 'InvalidPatternError';
  /** The offending pattern or option value, as given. */
  readonly pattern: string;

  constructor(pattern: string, message: string, options?: { cause?: unknown }) {
    // Configuration does not fix itself.
    super(message, { retryable: false, cause: options?.cause });
    this.pattern = pattern;
  }
}

/** Text given as an IP address is not one. Never retryable. */
export class InvalidIpError extends CrawlqError {
  override readonly name = 'InvalidIpError';
  /** The text as given (cut to 100 characters). */
  readonly address: string;

  constructor(address: string) {
    const shown = address.slice(0, 100);
    // The same text fails the same way every time.
    super(`Not an IPv4 or IPv6 address: ${JSON.stringify(shown)}`, { retryable: false });
    this.address = shown;
  }
}
