import { classifyFailure } from '@crawlq/dead-letter';
import { describe, expect, it } from 'vitest';
import { CrawlerDefinitionError, defineCrawler, isCrawler, NonRetryableError, RetryableError } from '../../src/index.js';
import { handlerFailure, retryableByUser } from '../../src/handlers/handler-errors.js';

describe('defineCrawler', () => {
  it('returns a frozen crawler a worker recognises', () => {
    const crawler = defineCrawler({ routes: { page: () => undefined }, defaultRoute: 'page' });
    expect(isCrawler(crawler)).toBe(true);
    expect(Object.isFrozen(crawler)).toBe(true);
    expect(isCrawler({ routes: {}, defaultRoute: 'page' })).toBe(false);
  });

  it('refuses what cannot run, with the reason (plain JavaScript gets no help from the types)', () => {
    const loose = defineCrawler as (definition: unknown) => unknown;
    expect(() => loose({ routes: {}, defaultRoute: 'x' })).toThrow(new CrawlerDefinitionError('routes: expected at least one route'));
    expect(() => loose({ routes: { a: () => undefined }, defaultRoute: 'b' })).toThrow('defaultRoute: expected one of a, got "b"');
    expect(() => loose({ routes: { a: 'x' }, defaultRoute: 'a' })).toThrow('routes.a: expected a function');
    expect(() => loose({ routes: { a: () => undefined }, defaultRoute: 'a', onFailure: 1 })).toThrow('onFailure: expected a function');
  });
});

describe('errors from the user\'s code', () => {
  it('RetryableError / NonRetryableError say which, from any copy of crawlq (a global symbol)', () => {
    expect(retryableByUser(new RetryableError('later'))).toBe(true);
    expect(retryableByUser(new NonRetryableError('never'))).toBe(false);
    expect(retryableByUser(new Error('plain'))).toBeUndefined();
    expect(retryableByUser({ [Symbol.for('crawlq.retryable')]: false })).toBe(false);
  });

  it('a failure keeps the message and the stack, redacted, with reason handler or the user\'s own', () => {
    const thrown = new Error('price missing at https://user:secret@shop.test/p?token=abc');
    const failure = classifyFailure(handlerFailure(thrown, { retryable: false }));
    expect(failure.reason).toBe('handler');
    expect(failure.message).toBe('handler: price missing at https://user:***@shop.test/p?token=***');
    expect(failure.message).not.toContain('secret');
    expect(failure.stack).toContain('define-crawler.test.ts');
    expect(failure.stack).not.toContain('secret');
    const own = classifyFailure(handlerFailure(new NonRetryableError('gone', { reason: 'Out of stock' }), { retryable: false }));
    expect(own).toMatchObject({ reason: 'out-of-stock', message: 'out-of-stock: gone' });
  });
});
