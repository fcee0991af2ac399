/**
 * W3C Datetime (the profile of ISO 8601 sitemaps.org asks for): a year, a
 * month or a day alone, or a day with a time to the minute, the second or a
 * fraction of it, in UTC (`Z`) or at an offset (`+hh:mm`). A time without a
 * zone is read as UTC, and `+hhmm` and a space before the time are accepted
 * (written that way in the wild, and unambiguous).
 */
const W3C_DATETIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/;

/**
 * A sitemap `<lastmod>` as a time (ms since the epoch), or undefined when it
 * is not a W3C Datetime / ISO 8601 date (a word, a day that does not exist,
 * an hour past 24:00): such a value says nothing and is ignored, never an
 * error. A date without a time is its first instant (UTC). A time in the
 * future is returned as written: what it means is the caller's decision.
 */
export function parseLastmod(text: string): number | undefined {
  const match = W3C_DATETIME.exec(text.trim());
  if (match === null) return undefined;
  const [, year, month = '01', day = '01', hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour);
  const mi = Number(minute);
  const s = Number(second);
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return undefined;
  // 24:00 is the end of a day (ISO 8601); a leap second is read as the next second.
  if (h > 24 || mi > 59 || s > 60 || (h === 24 && (mi > 0 || s > 0 || Number(`0.${fraction || '0'}`) > 0))) return undefined;
  const ms = Math.floor(Number(`0.${fraction || '0'}`) * 1000);
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  // Date.UTC maps years 0-99 to 1900-1999; set the year as written.
  const at = y < 100 ? new Date(utc).setUTCFullYear(y) : utc;
  const offset = offsetMs(zone);
  return offset === undefined ? undefined : at - offset;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A zone designator's offset from UTC (ms); undefined past ±23:59. */
function offsetMs(zone: string): number | undefined {
  if (zone === 'Z' || zone === 'z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}
