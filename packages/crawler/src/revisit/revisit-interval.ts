/** A revisit policy: off, adaptive, or a fixed interval (ms). */
export type RevisitMode = 'off' | 'adaptive' | number;

/** One URL's revisit policy (the fleet's, or a limit rule's for its group). */
export interface RevisitPolicy {
  readonly mode: RevisitMode;
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * Adaptive steps: an interval that saw a change is halved, one that saw none
 * grows by half. At equilibrium a page is found changed on about 37% of
 * visits (ln 1.5 / (ln 1.5 + ln 2)), so each page is visited about 2.2 times
 * per mean change interval: often enough to keep it fresh most of the time,
 * while pages that never change drift to the maximum and cost almost nothing.
 * Shrinking faster than growing follows Nutch's AdaptiveFetchSchedule in spirit
 * (its rates are 0.2/0.4); these were chosen by the freshness bench.
 */
export const ADAPTIVE_SHRINK = 0.5;
export const ADAPTIVE_GROW = 1.5;
/** A page whose links changed (a hub) comes back sooner still: new pages are found through it. */
export const HUB_FACTOR = 0.5;

/** What a fetch told about a URL, for its next interval. */
export interface IntervalInput {
  readonly policy: RevisitPolicy;
  /** The interval that led to this fetch; undefined on a URL's first fetch. */
  readonly previousMs: number | undefined;
  readonly changed: boolean;
  /** The links on the page changed (a hub). */
  readonly linksChanged?: boolean;
  /** A freshness hint from the server (Cache-Control max-age, Expires) or a sitemap (changefreq), ms. */
  readonly hintMs?: number | undefined;
}

/** The interval until a URL's next fetch (ms), within the policy's bounds. */
export function nextInterval(input: IntervalInput): number {
  const { policy } = input;
  if (typeof policy.mode === 'number') return policy.mode;
  const clamp = (ms: number) => Math.min(policy.maxMs, Math.max(policy.minMs, ms));
  if (input.previousMs === undefined) {
    // First fetch: a hint if there is one, else halfway (geometrically) between the bounds.
    return clamp(input.hintMs ?? Math.sqrt(policy.minMs * policy.maxMs));
  }
  let next = input.previousMs * (input.changed ? ADAPTIVE_SHRINK : ADAPTIVE_GROW);
  if (input.changed && input.linksChanged === true) next *= HUB_FACTOR;
  return clamp(next);
}

/**
 * A freshness hint from response headers: `Cache-Control: max-age` (or
 * s-maxage), else `Expires` minus `Date`; undefined without one, or with
 * `no-cache`/`no-store` (which say nothing about how often it changes).
 */
export function headerHintMs(headers: Record<string, string | string[] | undefined>, now: number): number | undefined {
  const cacheControl = single(headers['cache-control'])?.toLowerCase();
  if (cacheControl !== undefined) {
    if (/\b(no-store|no-cache)\b/.test(cacheControl)) return undefined;
    const maxAge = /\b(?:s-maxage|max-age)\s*=\s*"?(\d+)/.exec(cacheControl)?.[1];
    if (maxAge !== undefined) {
      const seconds = Number(maxAge);
      return seconds > 0 ? seconds * 1_000 : undefined;
    }
  }
  const expires = Date.parse(single(headers.expires) ?? '');
  if (Number.isNaN(expires)) return undefined;
  const date = Date.parse(single(headers.date) ?? '');
  const ms = expires - (Number.isNaN(date) ? now : date);
  return ms > 0 ? ms : undefined;
}

/** Sitemap `<changefreq>` as an interval (ms); `always`/`never` mean the bounds. */
export function changefreqMs(value: string): number | undefined {
  const table: Record<string, number> = { always: 0, hourly: 3_600_000, daily: 86_400_000, weekly: 604_800_000, monthly: 2_592_000_000, yearly: 31_536_000_000, never: Number.POSITIVE_INFINITY };
  return table[value.trim().toLowerCase()];
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
