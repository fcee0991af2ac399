import { createHash } from 'node:crypto';
import type { CrawlqConfig } from '@crawlq/config';
import { hostMatchesGlob } from '@crawlq/urls';

/** A revisit policy: off, adaptive, or a fixed interval (ms). */
export type RevisitMode = 'off' | 'adaptive' | number;

/** One URL's revisit policy (the fleet's, or a limit rule's for its group). */
export interface RevisitPolicy {
  readonly mode: RevisitMode;
  readonly minMs: number;
  readonly maxMs: number;
}

/** The revisit policy of a group: the first limit rule that matches it and sets one, else the fleet's. */
export function revisitPolicyOf(config: Pick<CrawlqConfig, 'revisit' | 'revisitMin' | 'revisitMax' | 'limitRules'>, group: string): RevisitPolicy {
  const fleet: RevisitPolicy = { mode: config.revisit, minMs: config.revisitMin, maxMs: config.revisitMax };
  if (fleet.mode === 'off') return fleet;
  for (const rule of config.limitRules) {
    if (rule.revisit === undefined && rule.revisitMin === undefined && rule.revisitMax === undefined) continue;
    if (!hostMatchesGlob(group, rule.match)) continue;
    return { mode: rule.revisit ?? fleet.mode, minMs: rule.revisitMin ?? fleet.minMs, maxMs: rule.revisitMax ?? fleet.maxMs };
  }
  return fleet;
}

/**
 * Adaptive revisits follow Cho and Garcia-Molina ("Effective page refresh
 * policies", 2003): each URL's change rate is estimated from what its visits
 * saw, and its interval is the one that maximises the crawl's time-averaged
 * freshness for a given cost per request. For a page changing at rate λ
 * visited every I, with x = λI, that optimum is the x where
 * 1 - (1 + x)e^(-x) = μλ, one constant μ (seconds) for every page: slowly
 * changing pages are visited about every sqrt(2μ/λ), and a page changing
 * faster than about once per μ is not chased (it would be stale almost all
 * the time however often it was fetched). The shortest interval this gives
 * over all rates is about 3.3μ, so μ comes from --revisit-min: the page most
 * worth revisiting is revisited every --revisit-min.
 */
export const MIN_TO_MU = 1 / 3.33;
/** Weight of the prior (in visits) a new URL's estimate starts from. */
export const PRIOR_WEIGHT = 0.1;
/** Each visit's history counts this much less at the next (recent visits weigh more: pages change their habits). */
export const HISTORY_DECAY = 0.9;
/** A page whose changes change its links (a hub) comes back sooner: new pages are found through it. */
export const HUB_FACTOR = 0.5;

/** A URL's change history (see ChangeEstimate in @crawlq/frontier). */
export interface ChangeHistory {
  readonly changes: number;
  readonly unchangedMs: number;
  readonly changedMs: number;
}

/** What a fetch told about a URL, for its next interval. */
export interface IntervalInput {
  readonly policy: RevisitPolicy;
  /** The interval that led to this fetch; undefined on a URL's first fetch. */
  readonly previousMs: number | undefined;
  /** The change history before this fetch; undefined on a URL's first fetch (or one never under the adaptive policy). */
  readonly history?: ChangeHistory | undefined;
  /** Time since the URL's last fetch (ms). */
  readonly elapsedMs?: number | undefined;
  readonly changed: boolean;
  /**
   * The page is a hub: its links changed at its last change (this visit's,
   * if it found one). Its interval is HUB_FACTOR of what its change rate
   * alone gives, within the bounds.
   */
  readonly linksChanged?: boolean;
  /** A freshness hint from the server (Cache-Control max-age, Expires), ms: the prior of a new URL's change rate and a floor on every interval. */
  readonly hintMs?: number | undefined;
  /**
   * A prior interval that is no floor (a sitemap's `<changefreq>`), ms: the
   * prior of a new URL's change rate, before `hintMs`. A page listed as
   * changing daily that changes hourly is learned as such.
   */
  readonly priorMs?: number | undefined;
}

/** The interval until a URL's next fetch (ms), within the policy's bounds, and the history to store. */
export function nextInterval(input: IntervalInput): number {
  return nextSchedule(input).intervalMs;
}

/** The x > 0 where 1 - (1 + x)e^(-x) = u (0 < u < 1), by bisection. */
function optimalX(u: number): number {
  let low = 0;
  let high = 60;
  for (let i = 0; i < 50; i += 1) {
    const mid = (low + high) / 2;
    if (1 - (1 + mid) * Math.exp(-mid) < u) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** The freshness-optimal interval (ms) for a page changing at `rate` (per ms) under the policy's μ, within its bounds. */
export function optimalIntervalMs(policy: RevisitPolicy, rate: number): number {
  const clamp = (ms: number) => Math.min(policy.maxMs, Math.max(policy.minMs, ms));
  const mu = policy.minMs * MIN_TO_MU;
  const u = mu * rate;
  if (!(u > 0)) return policy.maxMs;
  if (u >= 0.999) return policy.maxMs;
  return clamp(optimalX(u) / rate);
}

/** The change rate (per ms) a history says: the maximum-likelihood estimate for Poisson changes seen at visits. */
export function estimatedRate(history: ChangeHistory): number {
  if (history.changes <= 0 || history.changedMs <= 0) return 0;
  const perChange = history.changedMs / history.changes;
  return Math.log(1 + history.changedMs / Math.max(history.unchangedMs, 1)) / perChange;
}

/**
 * The next interval and the history to store with it. Under the adaptive
 * policy a freshness hint is also a floor: a page is not fetched again while
 * its server says the copy is fresh. The floor is held within the policy's
 * bounds like every interval, so a header that lies cannot break them: a
 * `max-age` of ten years waits `--revisit-max` (the page is still revisited),
 * and `max-age=0` or a second waits `--revisit-min` at least (the hint adds
 * nothing below it). A fixed interval is what the user asked for and ignores hints.
 */
export function nextSchedule(input: IntervalInput): { intervalMs: number; history: ChangeHistory | undefined } {
  const { policy } = input;
  if (typeof policy.mode === 'number') return { intervalMs: policy.mode, history: undefined };
  const next = adaptiveSchedule(input);
  return { ...next, intervalMs: hintFloor(policy, next.intervalMs, input.hintMs) };
}

/** An interval raised to a freshness hint, within the policy's bounds. */
export function hintFloor(policy: RevisitPolicy, intervalMs: number, hintMs: number | undefined): number {
  const floor = hintMs !== undefined && hintMs > 0 ? hintMs : 0;
  return Math.min(policy.maxMs, Math.max(policy.minMs, intervalMs, floor));
}

function adaptiveSchedule(input: IntervalInput): { intervalMs: number; history: ChangeHistory | undefined } {
  const { policy } = input;
  if (input.previousMs === undefined || input.history === undefined || input.history.changes <= 0) {
    // A new URL (or one new to this policy): assumed to change about once per
    // prior (a sitemap's changefreq), else per hint (Cache-Control), else once
    // per sqrt(min * max), with the weight of a tenth of a visit. Either is held
    // to the bounds first: a ten-year max-age would otherwise outweigh a
    // hundred visits' evidence once the header goes away.
    const given = input.priorMs ?? input.hintMs;
    const priorMs = given === undefined || Number.isNaN(given) ? undefined : Math.min(policy.maxMs, Math.max(policy.minMs, given));
    const rate = 1 / Math.max(1, priorMs ?? Math.sqrt(policy.minMs * policy.maxMs));
    const changedMs = (PRIOR_WEIGHT * Math.LN2) / rate;
    const history = { changes: PRIOR_WEIGHT, unchangedMs: changedMs, changedMs };
    if (input.previousMs === undefined) return { intervalMs: optimalIntervalMs(policy, rate), history };
    return adaptiveSchedule({ ...input, history });
  }
  const elapsed = Math.max(policy.minMs / 10, input.elapsedMs ?? input.previousMs);
  const old = input.history;
  const history = {
    changes: old.changes * HISTORY_DECAY + (input.changed ? 1 : 0),
    unchangedMs: old.unchangedMs * HISTORY_DECAY + (input.changed ? 0 : elapsed),
    changedMs: old.changedMs * HISTORY_DECAY + (input.changed ? elapsed : 0),
  };
  let intervalMs = optimalIntervalMs(policy, estimatedRate(history));
  if (input.linksChanged === true) intervalMs = Math.max(policy.minMs, intervalMs * HUB_FACTOR);
  return { intervalMs, history };
}

// Hubs (`linksChanged` above) are told by their link sets, from one change to the next.

/**
 * A page's links as an 8-bit hash (0-255), compared from one change of the
 * page to the next to tell a hub (a page whose changes change its links) from
 * a page whose text changes only. The set is what the crawl follows from the
 * page: normalised, inside the crawl's scope, each link once, in any order
 * (sorted before hashing), so a page that only reorders or repeats its links
 * keeps its hash. One byte is what the state's budget of 64 bytes per known
 * URL leaves (two measured 64.02): two different sets share a hash once in
 * 256 changes, and that change counts as one of text only (a hub is taken
 * for a page whose text changed until its next change; never the reverse).
 * Undefined for no links at all: such a page is no hub, and keeps no hash.
 */
export function linkSetHash(links: Iterable<string>): number | undefined {
  const unique = [...new Set(links)];
  if (unique.length === 0) return undefined;
  // Code unit order: the same for every process, whatever its locale.
  unique.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = createHash('sha256');
  for (const link of unique) hash.update(`${link}\n`);
  return hash.digest().readUInt8(0);
}

/**
 * Whether a page is a hub after a fetch: a change compares its link set with
 * the one kept at its last change (neither known: no); a fetch that found no
 * change leaves the verdict of the last one.
 */
export function isHub(options: { readonly changed: boolean; readonly before: number | undefined; readonly after: number | undefined; readonly wasHub: boolean }): boolean {
  if (!options.changed) return options.wasHub;
  return options.before !== undefined && options.after !== undefined && options.before !== options.after;
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

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
