/** Parsing of the human-friendly units used by flags, env vars and config files. */

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION_PATTERN = /^(\d+(?:\.\d+)?)?\s*(ms|s|m|h|d)?$/;

/**
 * Parses `500ms`, `10s`, `5m`, `1h`, `2d`, a bare number of milliseconds, or a
 * bare unit (`s` = one second, so `5/s` reads naturally). Returns undefined
 * when the text is not a duration.
 */
export function parseDurationMs(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? text : undefined;
  const match = DURATION_PATTERN.exec(text.trim().toLowerCase());
  if (!match || (match[1] === undefined && match[2] === undefined)) return undefined;
  const amount = match[1] === undefined ? 1 : Number(match[1]);
  const unit = DURATION_UNITS_MS[match[2] ?? 'ms'] ?? 1;
  const ms = Math.round(amount * unit);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A rate: at most `max` request starts per `durationMs`. */
export interface Rate {
  readonly max: number;
  readonly durationMs: number;
}

/**
 * Parses `MAX/DURATION` (`5/1s`, `60/1m`, `10/s`). `none`, `off` and
 * `unlimited` mean no limit (null). Returns undefined when malformed.
 */
export function parseRate(text: string): Rate | null | undefined {
  const trimmed = text.trim().toLowerCase();
  if (['none', 'off', 'unlimited'].includes(trimmed)) return null;
  const [maxText, durationText, ...rest] = trimmed.split('/');
  if (maxText === undefined || durationText === undefined || rest.length > 0) return undefined;
  const max = Number(maxText);
  const durationMs = parseDurationMs(durationText);
  if (!Number.isInteger(max) || max < 1 || durationMs === undefined || durationMs < 1) return undefined;
  return { max, durationMs };
}

/** Formats a rate back into the `MAX/DURATION` form for display. */
export function formatRate(rate: Rate | null): string {
  if (rate === null) return 'unlimited';
  return `${rate.max}/${formatDuration(rate.durationMs)}`;
}

/** Formats milliseconds with the largest unit that divides them evenly. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Parses sizes such as `10mb`, `512kb`, `1gb` or a bare number of bytes. */
export function parseBytes(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isInteger(text) && text >= 0 ? text : undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const factor: Record<string, number> = { b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 };
  return Math.round(Number(match[1]) * (factor[match[2] ?? 'b'] ?? 1));
}
