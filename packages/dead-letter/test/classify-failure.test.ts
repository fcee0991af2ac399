import { describe, expect, it } from 'vitest';
import { UnrecoverableError } from 'bullmq';
import { classifyFailure, classifyFailureMessage, csvField } from '../src/index.js';

describe('classifyFailure', () => {
  it('prefers structured fields: reason, then status, then code, then name', () => {
    expect(classifyFailure(Object.assign(new Error('x'), { reason: 'body-too-large', status: 200 }))).toMatchObject({ reason: 'body-too-large', status: 200 });
    expect(classifyFailure(Object.assign(new Error('boom'), { status: 503, code: 'ERR_HTTP_STATUS' }))).toMatchObject({ reason: 'http-503', status: 503 });
    expect(classifyFailure(Object.assign(new Error('boom'), { response: { statusCode: 429 } }))).toMatchObject({ reason: 'http-429', status: 429 });
    expect(classifyFailure(Object.assign(new Error('boom'), { code: 'ETIMEDOUT' }))).toMatchObject({ reason: 'timeout', status: null });
    expect(classifyFailure(Object.assign(new Error('boom'), { code: 'ECONNREFUSED' }))).toMatchObject({ reason: 'network' });
    const timeout = new Error('Timeout awaiting request');
    timeout.name = 'TimeoutError';
    expect(classifyFailure(timeout)).toMatchObject({ reason: 'timeout', errorClass: 'TimeoutError' });
  });

  it('looks through wrappers and their causes', () => {
    class PolicyViolation extends Error {
      override readonly name = 'PolicyViolation';
      readonly reason = 'ssrf';
    }
    const wrapped = new Error('request failed', { cause: new PolicyViolation('10.0.0.1 is private') });
    expect(classifyFailure(wrapped)).toMatchObject({ reason: 'ssrf', errorClass: 'PolicyViolation', message: 'request failed' });
    // A reset while a 200's body was read: the fetcher's reason wins over the status got's error kept.
    const reset = Object.assign(new Error('ECONNRESET (reading an HTTP 200 response)', { cause: Object.assign(new Error('read ECONNRESET'), { response: { statusCode: 200 } }) }), {
      reason: 'network',
      code: 'ECONNRESET',
    });
    expect(classifyFailure(reset)).toMatchObject({ reason: 'network' });
  });

  it('reads the message when only the message is left (UnrecoverableError wrappers, failedReason)', () => {
    const permanent = new UnrecoverableError('PermanentFetchError: Fetching https://x.test/a refused (body-too-large): 12 MB over 10 MB');
    expect(classifyFailure(permanent)).toMatchObject({ reason: 'body-too-large', errorClass: 'PermanentFetchError', status: null });
    expect(classifyFailure(new UnrecoverableError('group shop.test has been paused for 700 s, past --max-blocked'))).toMatchObject({
      reason: 'blocked-group',
      errorClass: 'UnrecoverableError',
    });
    expect(classifyFailureMessage('Fetching https://x.test/ failed after 2 retries: HTTP 502')).toMatchObject({ reason: 'http-502', status: 502 });
    expect(classifyFailureMessage('Fetching https://x.test/ failed after 2 retries: ETIMEDOUT')).toMatchObject({ reason: 'timeout' });
    expect(classifyFailureMessage('connect ECONNREFUSED 127.0.0.1:80', 'Error: connect ECONNREFUSED\n    at x')).toMatchObject({ reason: 'network' });
    expect(classifyFailureMessage('disallowed by robots.txt')).toMatchObject({ reason: 'robots' });
    // What reconcile() has for a robots-unreachable dead letter whose worker died: reason and status from the text.
    expect(
      classifyFailureMessage('robots-unreachable: robots.txt http://a.test/robots.txt unreachable for 120 s (7 tries), last: HTTP 503'),
    ).toMatchObject({ reason: 'robots-unreachable', status: 503 });
    expect(classifyFailureMessage('blocked-group: group a.test has been waiting 121 s (429 pause), past --max-blocked')).toMatchObject({
      reason: 'blocked-group',
    });
    expect(classifyFailureMessage('job stalled more than allowable limit')).toMatchObject({ reason: 'stalled' });
    expect(classifyFailureMessage('Invalid URL', 'TypeError [ERR_INVALID_URL]: Invalid URL\n    at y')).toMatchObject({ reason: 'invalid-url', errorClass: 'TypeError' });
    expect(classifyFailureMessage('something odd')).toMatchObject({ reason: 'error', status: null, errorClass: 'Error' });
    // A body that failed to read is its code's failure, not the status its response had.
    expect(classifyFailureMessage('Fetching https://x.test/ failed after 0 retries: ECONNRESET (reading an HTTP 200 response)')).toMatchObject({ reason: 'network', status: null });
    expect(classifyFailureMessage('Fetching https://x.test/ failed after 0 retries: Z_DATA_ERROR (reading an HTTP 200 response)')).toMatchObject({ reason: 'decompression' });
    expect(classifyFailureMessage('Fetching https://x.test/ failed after 0 retries: ERR_INVALID_STATUS (status line 000 is not an HTTP status)')).toMatchObject({ reason: 'invalid-status' });
  });

  it('handles thrown non-errors and keeps credentials out of messages', () => {
    expect(classifyFailure('plain string')).toMatchObject({ reason: 'error', message: 'plain string' });
    expect(classifyFailure(undefined)).toMatchObject({ reason: 'error', message: 'unknown error' });
    const { message } = classifyFailure(new Error('GET https://bob:hunter2@x.test/p?token=abc&page=2 failed; Authorization: Bearer xyz'));
    expect(message).toBe('GET https://bob:***@x.test/p?token=***&page=2 failed; Authorization: ***');
    expect(classifyFailure(new Error('x'.repeat(5000))).message.length).toBeLessThanOrEqual(1000);
  });
});

describe('CSV fields', () => {
  it('quotes CSV fields only when needed and defuses formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField(null)).toBe('');
    expect(csvField(503)).toBe('503');
  });
});
