import { CrawlqError } from '@crawlq/errors';

/** Base class of the errors thrown by `@crawlq/robots`; `retryable` says whether trying again may help. */
export class RobotsError extends CrawlqError {
  override readonly name: string = 'RobotsError';

  constructor(message: string, details: { retryable: boolean; cause?: unknown }) {
    super(message, { retryable: details.retryable, cause: details.cause });
  }
}

/** An option of `createRobotsPolicy` that cannot be used. Not retryable. */
export class RobotsOptionsError extends RobotsError {
  override readonly name = 'RobotsOptionsError';
  /** The offending option, e.g. `userAgent`. */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message, { retryable: false });
    this.option = option;
  }
}

/** Redis failed while reading or writing the shared robots.txt cache. Retryable. */
export class RobotsStoreError extends RobotsError {
  override readonly name = 'RobotsStoreError';
  /** The origin (`scheme://host[:port]`) whose entry was being read or written. */
  readonly origin: string;
  /** What was being done: `read`, `write`, `lock` or `unlock`. */
  readonly operation: 'read' | 'write' | 'lock' | 'unlock';

  constructor(options: { origin: string; operation: RobotsStoreError['operation']; cause: unknown }) {
    super(`robots.txt cache ${options.operation} failed for ${options.origin}`, { retryable: true, cause: options.cause });
    this.origin = options.origin;
    this.operation = options.operation;
  }
}

/**
 * Thrown by a `FetchRobots` that may not send the request now (the host's
 * politeness group is paused): not a failure of robots.txt, so nothing is
 * stored or counted; `check` rejects with this error and the caller retries
 * after `retryInMs`.
 */
export class RobotsFetchPostponedError extends RobotsError {
  override readonly name = 'RobotsFetchPostponedError';
  readonly retryInMs: number;

  constructor(retryInMs: number, why: string) {
    super(`robots.txt fetch postponed ${retryInMs} ms: ${why}`, { retryable: true });
    this.retryInMs = retryInMs;
  }
}
