import { describe, expect, it } from 'vitest';
import { AlertConfigError, createAlerts, renderDigestEmail, type Digest } from '../src/index.js';

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
    expect(email.html).toContain('&lt;script&gt;');
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
