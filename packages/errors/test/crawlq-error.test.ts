import { describe, expect, it } from 'vitest';
import { CrawlqError, type CrawlqErrorOptions } from '@crawlq/errors';

class SampleError extends CrawlqError {
  override readonly name = 'SampleError';
  constructor(message: string, options: CrawlqErrorOptions) {
    super(message, options);
  }
}

describe('CrawlqError', () => {
  it('keeps the message, the subclass name, retryable and the failure reason', () => {
    const error = new SampleError('it broke', { retryable: true, failureReason: 'timeout' });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(CrawlqError);
    expect(error.message).toBe('it broke');
    expect(error.name).toBe('SampleError');
    expect(String(error)).toBe('SampleError: it broke');
    expect(error.retryable).toBe(true);
    expect(error.failureReason).toBe('timeout');
  });

  it('has no failureReason or cause key at all when none is given, as a plain Error has none', () => {
    const error = new SampleError('refused', { retryable: false });
    expect(error.retryable).toBe(false);
    expect('failureReason' in error).toBe(false);
    expect('cause' in error).toBe(false);
  });

  it('keeps the cause it wraps as the standard cause', () => {
    const cause = new Error('underneath');
    expect(new SampleError('on top', { retryable: false, cause }).cause).toBe(cause);
  });
});
