import { CrawlqError } from '@crawlq/errors';

/**
 * A field rule whose selector cannot be compiled. A configuration mistake:
 * it would fail on every page, so never retryable.
 */
export class InvalidFieldRuleError extends CrawlqError {
  override readonly name = 'InvalidFieldRuleError';
  /** Name of the offending rule. */
  readonly field: string;
  /** Its selector. */
  readonly selector: string;

  constructor(field: string, selector: string, options?: { cause?: unknown }) {
    super(`Field rule ${JSON.stringify(field)} has an invalid selector ${JSON.stringify(selector)}`, {
      // The same rule fails on every page.
      retryable: false,
      cause: options?.cause,
    });
    this.field = field;
    this.selector = selector;
  }
}
