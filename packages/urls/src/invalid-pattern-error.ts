/**
 * A scope pattern or scope option that cannot be used (a `/regex/` that does
 * not compile, a host or domain scope without seeds). A configuration
 * mistake: never retryable.
 */
export class InvalidPatternError extends Error {
  override readonly name = 'InvalidPatternError';
  /** Configuration does not fix itself. */
  readonly retryable = false;
  /** The offending pattern or option value, as given. */
  readonly pattern: string;

  constructor(pattern: string, message: string, options?: { cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.pattern = pattern;
  }
}
