/** The columns `crawlq results export --format csv` writes, in order. */
export const CSV_COLUMNS = ['url', 'finalUrl', 'status', 'contentType', 'title', 'description', 'lang', 'depth', 'group', 'skipped', 'fetchedAt', 'attempts', 'bytes', 'links'] as const;

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
function field(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = Array.isArray(value)
    ? String(value.length)
    : typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

/** One CSV line; `links` is written as a count (the list belongs in JSONL). */
export function csvLine(record: Readonly<Record<string, unknown>>): string {
  return `${CSV_COLUMNS.map((column) => field(record[column])).join(',')}\r\n`;
}
