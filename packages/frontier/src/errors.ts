import { CrawlqError } from '@crawlq/errors';

/** Base class of the errors the frontier throws on its own behalf; `retryable` says whether trying again may help. */
export class FrontierError extends CrawlqError {
  override readonly name: string = 'FrontierError';

  constructor(message: string, details: { retryable: boolean; cause?: unknown }) {
    super(message, { retryable: details.retryable, cause: details.cause });
  }
}

/** A frontier setting or argument that cannot be used (e.g. a false-positive rate of 2). Not retryable. */
export class FrontierArgumentError extends FrontierError {
  override readonly name = 'FrontierArgumentError';
  /** The offending setting or argument, e.g. `seenSet.falsePositiveRate`. */
  readonly argument: string;

  constructor(message: string, argument: string) {
    super(message, { retryable: false });
    this.argument = argument;
  }
}

/**
 * The crawl's seen-set in Redis was created in another mode than this
 * frontier is configured for (an `exact` crawl resumed with `bloom`, or the
 * other way round). The two cannot be mixed: resume with the mode the crawl
 * started with, or start afresh. Not retryable.
 */
export class SeenSetMismatchError extends FrontierError {
  override readonly name = 'SeenSetMismatchError';
  /** The mode this frontier was configured with. */
  readonly configured: string;
  /** What the crawl's Redis holds: the other mode's name, or a description of an unknown layout. */
  readonly stored: string;

  constructor(details: { configured: string; stored: string }) {
    super(
      `the crawl's seen-set is ${details.stored}, but this process is configured for '${details.configured}': ` +
        'resume with the seen-set mode the crawl started with, or start it afresh',
      { retryable: false },
    );
    this.configured = details.configured;
    this.stored = details.stored;
  }
}
