import { CrawlqError } from '@crawlq/errors';

/**
 * A site spec, fault rule or call argument that cannot work (unknown host,
 * negative page count, non-loopback address...). Fix the input: retrying the
 * same call fails the same way.
 */
export class DemoSiteConfigError extends CrawlqError {
  override readonly name = 'DemoSiteConfigError';
  /** The spec field or argument at fault, e.g. `hosts[1]` or `faults[0].status`. */
  readonly field: string;

  constructor(field: string, message: string, options?: ErrorOptions) {
    // Never retryable: the same input fails again.
    super(`${field}: ${message}`, { retryable: false, cause: options?.cause });
    this.field = field;
  }
}

/** The servers of a demo site could not bind their address. */
export class DemoSiteListenError extends CrawlqError {
  override readonly name = 'DemoSiteListenError';
  /** The loopback address that failed to bind. */
  readonly host: string;
  /** The port that was asked for (0 = any free port). */
  readonly port: number;
  /** The system error code, e.g. `EADDRINUSE`, when there was one. */
  readonly code: string | undefined;

  constructor(options: { host: string; port: number; cause: unknown }) {
    const code = errorCode(options.cause);
    super(`cannot listen on ${options.host}:${options.port}${code === undefined ? '' : ` (${code})`}`, {
      // Retryable when the port was taken: another port, or the same one later, may work.
      retryable: code === 'EADDRINUSE',
      cause: options.cause,
    });
    this.host = options.host;
    this.port = options.port;
    this.code = code;
  }
}

/** The `code` of a Node.js system error, if the value carries one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
