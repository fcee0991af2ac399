import { canonicalPath } from './match-path.js';

/** One `Allow:` or `Disallow:` line of the group that applies to us, ready to match. */
export interface RobotsRule {
  readonly allow: boolean;
  /** The canonical pattern; its length decides precedence (RFC 9309: most octets wins). */
  readonly pattern: string;
  /** The pattern split at `*`: the first part must start the path, the others follow in order. */
  readonly parts: readonly string[];
  /** The pattern ended in `$`: the last part must end the path. */
  readonly anchored: boolean;
}

/** Compiles a path pattern of an `Allow:`/`Disallow:` line (not empty). */
export function compileRule(allow: boolean, value: string): RobotsRule {
  // Runs of `*` mean the same as one; collapsing them keeps hostile patterns short.
  const pattern = canonicalPath(value).replace(/\*{2,}/g, '*');
  const anchored = pattern.endsWith('$');
  const parts = (anchored ? pattern.slice(0, -1) : pattern).split('*');
  return { allow, pattern, parts, anchored };
}

/**
 * Orders rules so that the first one matching a path is the one RFC 9309 2.2.2
 * picks: the longest pattern, and `Allow` over `Disallow` when equally long.
 */
export function byPrecedence(a: RobotsRule, b: RobotsRule): number {
  if (a.pattern.length !== b.pattern.length) return b.pattern.length - a.pattern.length;
  return a.allow === b.allow ? 0 : a.allow ? -1 : 1;
}

/**
 * Whether a rule's pattern matches a canonical path (with query).
 *
 * `*` matches any run of characters, a final `$` anchors at the end. Parts
 * between wildcards are found left to right with `indexOf`, taking the earliest
 * occurrence each time: that leaves the most room for the parts that follow, so
 * it finds a match whenever one exists. Unlike the usual table-based matcher,
 * whose cost is pattern length × path length per rule (3 s per check measured
 * for a hostile 500 KiB robots.txt), this is about linear in the path per rule.
 */
export function ruleMatches(rule: RobotsRule, path: string): boolean {
  const { parts, anchored } = rule;
  const first = parts[0] ?? '';
  if (!path.startsWith(first)) return false;
  if (parts.length === 1) return !anchored || path.length === first.length;
  let position = first.length;
  const lastIndex = parts.length - 1;
  for (let index = 1; index < lastIndex; index += 1) {
    const part = parts[index] ?? '';
    const found = path.indexOf(part, position);
    if (found === -1) return false;
    position = found + part.length;
  }
  const last = parts[lastIndex] ?? '';
  if (anchored) return path.endsWith(last) && path.length - last.length >= position;
  return path.indexOf(last, position) !== -1;
}
