import { colors as makeColors, type Colors } from './color.js';

/** Fields every line carries; the pretty form shows them in its prefix, not again as key=value. */
const PREFIX_FIELDS = new Set(['time', 'level', 'msg', 'pid', 'worker', 'namespace', 'hostname']);

/**
 * One pino JSON line as a short human line:
 * `12:03:04.123 WARN  worker-0 could not dead-letter ... group=a.test`.
 * Anything that is not JSON passes through unchanged. With `color`, the time
 * is dimmed and the level coloured by severity (see `colorEnabled` for when).
 */
export function formatPrettyLine(jsonLine: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  const paint = makeColors(color);
  const time = typeof entry.time === 'string' && entry.time !== '' ? paint.dim(entry.time.slice(11, 23)) : '';
  const level = levelColor(paint, text(entry.level))(text(entry.level).toUpperCase().padEnd(5));
  const who = text(entry.worker ?? entry.pid);
  const extra = Object.entries(entry)
    .filter(([key]) => !PREFIX_FIELDS.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return `${[time, level, who, text(entry.msg), ...extra].filter((part) => part !== '').join(' ')}\n`;
}

function levelColor(paint: Colors, level: string): (text: string) => string {
  if (level === 'warn') return paint.yellow;
  if (level === 'error' || level === 'fatal') return paint.red;
  if (level === 'info') return paint.green;
  return paint.gray;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
