// `pnpm bench revisit-model`: the adaptive revisit policy (the workers' own
// nextSchedule) against a model of the revisit-freshness site, without
// processes or a network: 300 pages changing as seeded Poisson processes (60%
// never, 30% every 30 s, 10% every 5 s on average), requests served one at a
// time at 15/s, most overdue first. Adaptive's time-averaged staleness, then a
// fixed interval's at the same number of requests (found by bisection). It
// judges the policy where the e2e bench on a loaded machine cannot serve its
// schedule; the e2e bench (`revisit-freshness`) judges the crawler.
import { nextSchedule, optimalIntervalMs, type ChangeHistory, type RevisitPolicy } from '@crawlq/crawler';
import { fmt } from './support.js';

interface Page {
  readonly meanS: number | undefined;
  readonly changes: readonly number[];
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

function makePages(seed: number, count: number, horizonS: number): Page[] {
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    const draw = random();
    const meanS = draw < 0.6 ? undefined : draw < 0.9 ? 30 : 5;
    const changes: number[] = [];
    if (meanS !== undefined) for (let at = -Math.log(1 - random()) * meanS; at < horizonS; at += -Math.log(1 - random()) * meanS) changes.push(at);
    return { meanS, changes };
  });
}

const versionAt = (page: Page, at: number): number => {
  let version = 0;
  while (version < page.changes.length && (page.changes[version] ?? Infinity) <= at) version += 1;
  return version;
};

interface PageState {
  due: number;
  held: number;
  last: number | undefined;
  intervalMs: number | undefined;
  history: ChangeHistory | undefined;
  fetches: [number, number][];
}

/**
 * Runs a policy for `seconds`; staleness and requests over [warm, seconds].
 * `knownRates`: each page's interval is the policy's optimum for its true
 * change rate (nothing to learn): what the estimate costs is the gap to it.
 */
function run(pages: readonly Page[], policy: RevisitPolicy, options: { seconds: number; warm: number; rate: number; knownRates?: boolean }): { staleness: number; requests: number } {
  const states: PageState[] = pages.map((_, i) => ({ due: 1 + i / options.rate, held: -1, last: undefined, intervalMs: undefined, history: undefined, fetches: [] }));
  let now = 0;
  let requests = 0;
  for (;;) {
    let next = 0;
    for (let i = 1; i < states.length; i += 1) if ((states[i]?.due ?? Infinity) < (states[next]?.due ?? Infinity)) next = i;
    const state = states[next];
    const page = pages[next];
    if (state === undefined || page === undefined) break;
    now = Math.max(now + 1 / options.rate, state.due);
    if (now >= options.seconds) break;
    const version = versionAt(page, now);
    const schedule = nextSchedule({
      policy,
      previousMs: state.intervalMs,
      history: state.history,
      elapsedMs: state.last === undefined ? undefined : (now - state.last) * 1000,
      changed: state.held !== version,
    });
    state.fetches.push([now, version]);
    if (now >= options.warm) requests += 1;
    state.held = version;
    state.last = now;
    const intervalMs = options.knownRates === true ? optimalIntervalMs(policy, page.meanS === undefined ? 0 : 1 / (page.meanS * 1000)) : schedule.intervalMs;
    state.intervalMs = intervalMs;
    state.history = schedule.history;
    state.due = now + intervalMs / 1000;
  }
  let fresh = 0;
  let samples = 0;
  pages.forEach((page, i) => {
    const fetches = states[i]?.fetches ?? [];
    let k = 0;
    let held: number | undefined;
    for (let at = options.warm; at <= options.seconds; at += 0.1) {
      while (k < fetches.length && (fetches[k]?.[0] ?? Infinity) <= at) {
        held = fetches[k]?.[1];
        k += 1;
      }
      if (held === versionAt(page, at)) fresh += 1;
      samples += 1;
    }
  });
  return { staleness: 1 - fresh / samples, requests };
}

export function benchRevisitModel(log: (line: string) => void): void {
  const adaptive: RevisitPolicy = { mode: 'adaptive', minMs: 5_000, maxMs: 600_000 };
  for (const seconds of [240, 900]) {
    const options = { seconds, warm: seconds / 5, rate: 15 };
    const ratios: number[] = [];
    const known: number[] = [];
    // The fixed interval that spends what `run` spent, and the ratio of staleness.
    const againstFixed = (pages: readonly Page[], a: { staleness: number; requests: number }) => {
      let low = 1;
      let high = 600;
      let fixed = run(pages, { mode: high * 1000, minMs: 0, maxMs: 0 }, options);
      for (let step = 0; step < 20; step += 1) {
        const mid = (low + high) / 2;
        fixed = run(pages, { mode: mid * 1000, minMs: 0, maxMs: 0 }, options);
        if (fixed.requests > a.requests) low = mid;
        else high = mid;
      }
      return { fixed, fixedS: high, ratio: a.staleness / fixed.staleness };
    };
    for (const seed of [1, 2, 3]) {
      const pages = makePages(seed, 300, seconds + 100);
      const a = run(pages, adaptive, options);
      const { fixed, fixedS, ratio } = againstFixed(pages, a);
      ratios.push(ratio);
      const k = run(pages, adaptive, { ...options, knownRates: true });
      known.push(againstFixed(pages, k).ratio);
      log(`revisit-model: ${seconds} s, seed ${seed}: adaptive staleness ${fmt(a.staleness * 100, 1)}% at ${a.requests} requests (${fmt(a.requests / (seconds - options.warm), 1)}/s); fixed ${fmt(fixedS, 1)} s ${fmt(fixed.staleness * 100, 1)}% at ${fixed.requests}: ${fmt(ratio, 2)}x (with the true change rates known: ${fmt(known.at(-1) ?? 0, 2)}x)`);
    }
    log(`revisit-model: ${seconds} s (the last ${seconds - seconds / 5} s counted), 300 pages at 15 requests/s: adaptive staleness ${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)}x the fixed interval's at equal requests (goal <= 0.7x); the same policy given the true change rates ${fmt(Math.min(...known), 2)}-${fmt(Math.max(...known), 2)}x`);
  }
}
