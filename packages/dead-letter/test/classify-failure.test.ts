import { describe, expect, it } from 'vitest';
import { UnrecoverableError } from 'bullmq';
import { AlertConfigError, createAlerts, classifyFailure, classifyFailureMessage, csvField, escapeHtml, renderDigestEmail, type Digest } from '../src/index.js';

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
    expect(message).toBe('GET https://x.test/p?token=***&page=2 failed; Authorization: ***');
    expect(classifyFailure(new Error('x'.repeat(5000))).message.length).toBeLessThanOrEqual(1000);
  });
});

describe('redaction and escaping', () => {
  it('escapes HTML', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
  });

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

describe('renderDigestEmail', () => {
  const digest: Digest = {
    id: 'digest-7',
    namespace: 'crawlq',
    total: 37,
    byGroup: Object.fromEntries(Array.from({ length: 25 }, (_, index) => [`g${String(index).padStart(2, '0')}.test`, index === 0 ? 13 : 1])),
    byReason: { 'http-503': 30, timeout: 7 },
    examples: [
      { id: 'a', url: 'https://u:p@g00.test/a?token=t', group: 'g00.test', reason: 'http-503', status: 503 },
      { id: 'b', url: 'https://g00.test/"><script>alert(1)</script>', group: 'g00.test', reason: 'timeout', status: null },
    ],
    firstAt: '2025-01-01T10:00:00.000Z',
    lastAt: '2025-01-01T10:12:00.000Z',
    takenAt: '2025-01-01T10:12:30.000Z',
  };

  it('has the subject, sorted top-20 tables, examples, time range and review hints in both parts', () => {
    const email = renderDigestEmail(digest, { reviewCommand: 'pnpm crawlq dlq list', dashboardUrl: 'https://admin:pw@dash.test/dlq' });
    expect(email.subject).toBe('[crawlq] 37 pages dead-lettered (namespace crawlq)');
    expect(email.text).toContain('By group (top 20 of 25):');
    expect(email.text.indexOf('g00.test')).toBeLessThan(email.text.indexOf('g01.test'));
    expect(email.text).toMatch(/\(5 more\)\s+5/);
    expect(email.text).not.toContain('g24.test');
    expect(email.text).toMatch(/http-503\s+30\n\s+timeout\s+7/);
    expect(email.text).toContain('2025-01-01T10:00:00.000Z and 2025-01-01T10:12:00.000Z');
    expect(email.text).toContain('pnpm crawlq dlq list');
    expect(email.text).toContain('Dashboard: https://dash.test/dlq');
    for (const part of [email.text, email.html]) {
      expect(part).not.toContain('u:p@');
      expect(part).not.toContain('admin:pw');
      expect(part).not.toContain('token=t');
    }
    expect(email.html).not.toContain('<script>');
    expect(email.html).toContain('&#60;script&#62;');
  });

  it('says "1 page" for one', () => {
    expect(renderDigestEmail({ ...digest, total: 1 }, { reviewCommand: 'x' }).subject).toBe('[crawlq] 1 page dead-lettered (namespace crawlq)');
  });
});

describe('createAlerts', () => {
  const base = { from: 'a@b.test', to: ['ops@b.test'], outboxDir: '/nonexistent', reviewCommand: 'x' };
  it('refuses a mail configuration that cannot work, before connecting anywhere', () => {
    const connection = { host: '127.0.0.1', port: 1, lazyConnect: true };
    expect(() => createAlerts({ connection, namespace: 'n', mail: { ...base, smtpUrl: 'http://mail.test' } })).toThrow(AlertConfigError);
    expect(() => createAlerts({ connection, namespace: 'n', mail: { ...base, smtpUrl: 'not a url' } })).toThrow(AlertConfigError);
    expect(() => createAlerts({ connection, namespace: 'n', mail: { ...base, to: [], smtpUrl: 'smtp://127.0.0.1:25' } })).toThrow(/no recipients/);
  });
});
