import { parse } from 'tldts';
import { hostMatchesGlob } from './host-glob.js';
import { InvalidUrlError } from './errors.js';

/** How URLs are grouped for politeness limits. */
export type GroupBy = 'host' | 'domain';

/** A custom group: URLs whose host matches the glob `match` share the group `group`. */
export interface GroupRule {
  readonly match: string;
  readonly group: string;
}

/** How a crawl assigns politeness groups: custom rules first (first match wins), else by host or domain. */
export interface Grouping {
  readonly groupBy: GroupBy;
  readonly groupRules?: readonly GroupRule[] | undefined;
}

/**
 * What a custom group's name may be: like a group key, it sits inside Redis
 * keys, so no `{` `}` (hash tags), `*` `?` (globs) or whitespace.
 */
export const GROUP_NAME_PATTERN = /^[A-Za-z0-9._:~-]{1,200}$/;

/**
 * The politeness group of a URL: the group of the first rule whose host glob
 * (see `hostMatchesGlob`) matches its host, else {@link groupKeyOf}.
 *
 * @throws {InvalidUrlError} (`malformed`) when `url` does not parse.
 */
export function politenessGroupOf(url: string, grouping: Grouping): string {
  const rules = grouping.groupRules;
  if (rules === undefined || rules.length === 0) return groupKeyOf(url, grouping.groupBy);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidUrlError('malformed', url, { cause: error });
  }
  const rule = rules.find((candidate) => hostMatchesGlob(parsed.host, candidate.match));
  return rule ? rule.group : groupKeyOfParsed(parsed, grouping.groupBy);
}

// Everything a host may legally contain after normalisation, plus the
// brackets and colons of IPv6 literals and ports. Anything else (the WHATWG
// parser lets `{`, `}`, `*` and friends through) is percent-escaped so the
// key can sit inside a Redis key without forming a hash tag or glob.
const UNSAFE_KEY_CHAR = /[^a-z0-9._~:[\]-]/g;

/**
 * The politeness group a URL belongs to:
 * - `host`: the lower-case host name, with `:port` when the port is not the
 *   scheme's default (`example.com`, `example.com:8080`, `[::1]:3000`);
 * - `domain`: the registrable domain per the Public Suffix List, private
 *   section included (`a.b.example.co.uk` → `example.co.uk`,
 *   `alice.github.io` stays `alice.github.io`, since different owners should
 *   not share a budget or a scope); ports are ignored. IP addresses,
 *   `localhost` and names under suffixes not on the list fall back to the
 *   host name.
 *
 * The key is safe inside a Redis key: only `a-z 0-9 . _ ~ - : [ ]`, other
 * characters percent-escaped.
 *
 * @throws {InvalidUrlError} (`malformed`) when `url` does not parse.
 */
export function groupKeyOf(url: string, groupBy: GroupBy): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidUrlError('malformed', url, { cause: error });
  }
  return groupKeyOfParsed(parsed, groupBy);
}

/** {@link groupKeyOf} for an already parsed URL (saves a parse in hot paths). */
export function groupKeyOfParsed(parsed: URL, groupBy: GroupBy): string {
  let hostname = parsed.hostname;
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  const key = groupBy === 'host' ? (parsed.port === '' ? hostname : `${hostname}:${parsed.port}`) : domainOf(hostname);
  return safeKey(key);
}

/**
 * Registrable domain of a lower-case host name, or the host name itself for
 * IP addresses, `localhost`, public suffixes and names whose suffix is not on
 * the Public Suffix List.
 */
export function domainOf(hostname: string): string {
  if (hostname.startsWith('[')) return hostname;
  const info = parse(hostname, { allowPrivateDomains: true, extractHostname: false });
  // tldts applies the list's implicit "*" rule to unknown suffixes
  // (`a.internal` → `a.internal` as domain of `x.a.internal`); grouping
  // names under a suffix nobody registered would be a guess, so don't.
  if (info.domain === null || (info.isIcann !== true && info.isPrivate !== true)) return hostname;
  return info.domain;
}

function safeKey(key: string): string {
  return key.replace(UNSAFE_KEY_CHAR, (char) =>
    Array.from(textEncoder.encode(char), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

const textEncoder = new TextEncoder();
