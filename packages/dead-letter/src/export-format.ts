import type { DeadLetterEntry } from './dead-letter-entry.js';

/** Export file formats. */
export type ExportFormat = 'jsonl' | 'csv';

/** CSV columns, in order (the JSONL export has every field, including the original job). */
export const CSV_COLUMNS = [
  'id', 'url', 'group', 'depth', 'reason', 'status', 'errorClass', 'message',
  'attempts', 'maxAttempts', 'firstFailedAt', 'lastFailedAt', 'workerId',
] as const;

/** One entry as a JSON line (with the trailing newline). */
export function toJsonLine(entry: DeadLetterEntry): string {
  return `${JSON.stringify(entry)}\n`;
}

/** The CSV header line. */
export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

/** One entry as an RFC 4180 CSV record (CRLF-terminated). */
export function toCsvRow(entry: DeadLetterEntry): string {
  const values: Record<(typeof CSV_COLUMNS)[number], string | number | null> = {
    id: entry.id,
    url: entry.url,
    group: entry.group,
    depth: entry.depth,
    reason: entry.reason,
    status: entry.status,
    errorClass: entry.errorClass,
    message: entry.message,
    attempts: entry.attempts,
    maxAttempts: entry.jobOptions.attempts,
    firstFailedAt: entry.firstFailedAt,
    lastFailedAt: entry.lastFailedAt,
    workerId: entry.workerId,
  };
  return `${CSV_COLUMNS.map((column) => csvField(values[column])).join(',')}\r\n`;
}

/**
 * A CSV field: quoted when it holds a comma, quote, CR or LF (quotes doubled).
 * Text starting with `=`, `+`, `-`, `@`, tab or CR gets a leading `'`, so a
 * spreadsheet shows a crawled page's text instead of running it as a formula.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
