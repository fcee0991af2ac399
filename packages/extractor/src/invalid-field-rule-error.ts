/**
 * A field rule whose selector cannot be compiled. A configuration mistake:
 * it would fail on every page, so never retryable.
 */
export class InvalidFieldRuleError extends Error {
  override readonly name = 'InvalidFieldRuleError';
  /** The same rule fails on every page. */
  readonly retryable = false;
  /** Name of the offending rule. */
  readonly field: string;
  /** Its selector. */
  readonly selector: string;

  constructor(field: string, selector: string, options?: { cause?: unknown }) {
    super(`Field rule ${JSON.stringify(field)} has an invalid selector ${JSON.stringify(selector)}`, {
      cause: options?.cause,
    });
    this.field = field;
    this.selector = selector;
  }
}
