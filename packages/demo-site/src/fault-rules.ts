import { DemoSiteConfigError } from './errors.js';

/**
 * One fault to inject. Rules are checked in order; the first rule that
 * matches a request and has budget left decides the response.
 */
export interface FaultRule {
  /** Only requests to this host (one of the site's hosts). @default every host */
  readonly host?: string;
  /**
   * Request paths (pathname, without the query) this rule applies to: a string
   * matches exactly, a RegExp is tested. Without `path` the rule applies to
   * every path except `/robots.txt`, so a blanket rule does not also turn
   * into a robots.txt outage; name `/robots.txt` explicitly to fault it.
   * @default every page path
   */
  readonly path?: string | RegExp;
  /**
   * How many requests to each matching URL (counted per host and path, so a
   * pattern rule fails *every* page `times` times) get the fault before the
   * normal response comes back.
   * @default unlimited
   */
  readonly times?: number;
  /**
   * Status of the fault response (200–599), sent with a small HTML body.
   * `200` means "the normal response" (useful with `delayMs` to slow a path
   * down for its first `times` requests).
   */
  readonly status: number;
  /** Value of the `Retry-After` header (seconds or an HTTP date). @default no header */
  readonly retryAfter?: string;
  /** Never answer; the request stays open until the client gives up or the site closes. @default false */
  readonly hang?: boolean;
  /** Wait this long before answering. @default 0 */
  readonly delayMs?: number;
}

/** Matches requests against fault rules and counts how often each rule fired per URL. */
export class FaultBook {
  readonly #rules: readonly FaultRule[];
  // One counter map per rule, keyed by `host path`.
  readonly #fired: Map<string, number>[];

  /** @throws {DemoSiteConfigError} when a rule is malformed */
  constructor(rules: readonly FaultRule[], hosts: readonly string[]) {
    rules.forEach((rule, index) => {
      validateFaultRule(rule, `faults[${index}]`, hosts);
    });
    // Copy so later changes to the caller's array cannot alter the behaviour mid-run.
    this.#rules = [...rules];
    this.#fired = this.#rules.map(() => new Map<string, number>());
  }

  /** The rule that applies to this request (and uses up one of its `times`), if any. */
  take(host: string, pathname: string): FaultRule | undefined {
    for (const [index, rule] of this.#rules.entries()) {
      if (!matches(rule, host, pathname)) continue;
      const fired = this.#fired[index];
      if (fired === undefined) continue;
      const key = `${host} ${pathname}`;
      const count = fired.get(key) ?? 0;
      if (rule.times !== undefined && count >= rule.times) continue;
      fired.set(key, count + 1);
      return rule;
    }
    return undefined;
  }
}

function matches(rule: FaultRule, host: string, pathname: string): boolean {
  if (rule.host !== undefined && rule.host !== host) return false;
  if (rule.path === undefined) return pathname !== '/robots.txt';
  if (typeof rule.path === 'string') return rule.path === pathname;
  // A global or sticky RegExp keeps `lastIndex` between calls and would skip matches.
  rule.path.lastIndex = 0;
  return rule.path.test(pathname);
}

function validateFaultRule(rule: FaultRule, field: string, hosts: readonly string[]): void {
  if (!Number.isInteger(rule.status) || rule.status < 200 || rule.status > 599) {
    throw new DemoSiteConfigError(`${field}.status`, `must be an integer from 200 to 599, got ${String(rule.status)}`);
  }
  if (rule.host !== undefined && !hosts.includes(rule.host)) {
    throw new DemoSiteConfigError(`${field}.host`, `${rule.host} is not one of the site's hosts`);
  }
  if (rule.path !== undefined && typeof rule.path !== 'string' && !(rule.path instanceof RegExp)) {
    throw new DemoSiteConfigError(`${field}.path`, 'must be a string or a RegExp');
  }
  if (rule.times !== undefined && (!Number.isInteger(rule.times) || rule.times < 0)) {
    throw new DemoSiteConfigError(`${field}.times`, `must be a non-negative integer, got ${String(rule.times)}`);
  }
  if (rule.delayMs !== undefined && (!Number.isFinite(rule.delayMs) || rule.delayMs < 0)) {
    throw new DemoSiteConfigError(`${field}.delayMs`, `must be a non-negative number, got ${String(rule.delayMs)}`);
  }
  // A CR or LF would let the header value split the response.
  if (rule.retryAfter !== undefined && (typeof rule.retryAfter !== 'string' || /[\r\n]/.test(rule.retryAfter))) {
    throw new DemoSiteConfigError(`${field}.retryAfter`, 'must be a single-line string');
  }
}
