import { describe, expect, it } from 'vitest';
import { parseLastmod } from '../src/index.js';

describe('parseLastmod (W3C Datetime, the ISO 8601 profile sitemaps use)', () => {
  it.each([
    ['2024', Date.UTC(2024, 0, 1)],
    ['2024-05', Date.UTC(2024, 4, 1)],
    ['2024-05-01', Date.UTC(2024, 4, 1)],
    ['  2024-05-01  ', Date.UTC(2024, 4, 1)],
    ['2024-05-01T10:20Z', Date.UTC(2024, 4, 1, 10, 20)],
    ['2024-05-01T10:20:30Z', Date.UTC(2024, 4, 1, 10, 20, 30)],
    ['2024-05-01T10:20:30.25Z', Date.UTC(2024, 4, 1, 10, 20, 30, 250)],
    ['2024-05-01T10:20:30+02:00', Date.UTC(2024, 4, 1, 8, 20, 30)],
    ['2024-05-01T10:20:30-05:30', Date.UTC(2024, 4, 1, 15, 50, 30)],
    ['2024-05-01T10:20:30+0200', Date.UTC(2024, 4, 1, 8, 20, 30)],
    // Written that way in the wild: no zone (read as UTC), a space for the T.
    ['2024-05-01T10:20:30', Date.UTC(2024, 4, 1, 10, 20, 30)],
    ['2024-05-01 10:20:30Z', Date.UTC(2024, 4, 1, 10, 20, 30)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['2024-05-01T24:00:00Z', Date.UTC(2024, 4, 2)],
  ])('reads %j', (text, expected) => {
    expect(parseLastmod(text)).toBe(expected);
  });

  it.each([
    'yesterday',
    '',
    '0',
    '1714557600',
    'Wed, 01 May 2024 10:00:00 GMT',
    '05/01/2024',
    '2024-5-1',
    '2024-13-01',
    '2024-00-10',
    '2023-02-29',
    '2024-04-31',
    '2024-05-01T25:00Z',
    '2024-05-01T10:60Z',
    '2024-05-01T24:00:01Z',
    '2024-05-01T10Z',
    '2024-05-01T10:20:30+25:00',
    '2024-05-01T10:20:30 +02:00',
    '2024-05-01garbage',
    '{{lastmod}}',
  ])('ignores %j', (text) => {
    expect(parseLastmod(text)).toBeUndefined();
  });

  it('returns a time in the future as written (the caller decides what it means)', () => {
    expect(parseLastmod('2999-01-01')).toBe(Date.UTC(2999, 0, 1));
  });
});
