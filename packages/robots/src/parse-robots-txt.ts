import { agentTokenOf } from './product-token.js';
import { byPrecedence, compileRule, ruleMatches, type RobotsRule } from './robots-rule.js';

/** What a robots.txt says to one crawler. */
export interface RobotsRules {
  /** The rules of the groups that apply to us, in precedence order (first match wins). */
  readonly rules: readonly RobotsRule[];
  /** `Crawl-delay` of those groups in seconds, or `null` when none is given. */
  readonly crawlDelaySeconds: number | null;
  /** `Sitemap:` values as written (not yet resolved or checked). */
  readonly sitemaps: readonly string[];
}

// A valid, non-negative number of seconds: `10`, `0.5`, `.5`, `2.`.
const DELAY = /^(?:\d+\.?\d*|\.\d+)$/;

/**
 * Parses robots.txt text (RFC 9309) for the crawler whose product token is given.
 *
 * - Lines are split at CR, LF or CRLF; `#` starts a comment; a record is
 *   `key: value` with a case-insensitive key; lines without `:` are ignored.
 * - A group is one or more `User-agent` lines followed by rules; a
 *   `User-agent` line after a rule starts a new group. Every group naming our
 *   token (case-insensitively, comparing the leading letters, `_` and `-` of the
 *   line's value) applies, merged; if none does, every `*` group applies,
 *   merged; if there is none either, nothing is disallowed. A group that names
 *   us applies even when it has no rules (it then allows everything).
 * - `Crawl-delay` belongs to the current group (the first valid one of the
 *   applying groups wins); `Sitemap` lines are global and do not end a group;
 *   unknown records are ignored and do not end a group either.
 * - Empty `Allow:`/`Disallow:` values add no rule.
 *
 * Only the applying rules are kept, so a big file costs little memory once parsed.
 */
export function parseRobotsTxt(text: string, productToken: string): RobotsRules {
  const ours: RobotsRule[] = [];
  const everyone: RobotsRule[] = [];
  const sitemaps: string[] = [];
  let oursSeen = false;
  let oursDelay: number | null = null;
  let everyoneDelay: number | null = null;
  let agents = new Set<string>();
  let readingAgents = false;

  for (const line of text.split(/\r\n|\r|\n/)) {
    const hash = line.indexOf('#');
    const content = hash === -1 ? line : line.slice(0, hash);
    const colon = content.indexOf(':');
    if (colon === -1) continue;
    const key = content.slice(0, colon).trim().toLowerCase();
    const value = content.slice(colon + 1).trim();

    switch (key) {
      case 'user-agent': {
        if (!readingAgents) agents = new Set();
        readingAgents = true;
        const agent = agentTokenOf(value);
        if (agent !== null) agents.add(agent);
        if (agent === productToken) oursSeen = true;
        break;
      }
      case 'allow':
      case 'disallow': {
        readingAgents = false;
        if (value === '') break;
        const target = agents.has(productToken) ? ours : agents.has('*') ? everyone : null;
        target?.push(compileRule(key === 'allow', value));
        break;
      }
      case 'crawl-delay': {
        readingAgents = false;
        if (!DELAY.test(value)) break;
        const seconds = Number(value);
        if (agents.has(productToken)) oursDelay ??= seconds;
        else if (agents.has('*')) everyoneDelay ??= seconds;
        break;
      }
      case 'sitemap':
        if (value !== '') sitemaps.push(value);
        break;
      default:
        break;
    }
  }

  const rules = oursSeen ? ours : everyone;
  rules.sort(byPrecedence);
  return { rules, crawlDelaySeconds: oursSeen ? oursDelay : everyoneDelay, sitemaps };
}

/**
 * Whether the rules allow a canonical path (with query): the first matching
 * rule in precedence order decides, no match allows. `/robots.txt` is always
 * allowed (RFC 9309 2.2.2).
 */
export function isPathAllowed(robots: RobotsRules, path: string): boolean {
  if (path === '/robots.txt') return true;
  for (const rule of robots.rules) {
    if (ruleMatches(rule, path)) return rule.allow;
  }
  return true;
}
