/**
 * Host globs, the one matcher behind both kinds of config rule: group rules
 * (matched against a URL's `host`) and limit rules (matched against a group
 * key). Both see `host:port` for a non-default port, so both must read a port
 * in the same way.
 */

/**
 * Whether a host (or group key) matches a host glob, case-insensitively:
 * - `*` matches every host;
 * - `*.example.com` matches `a.example.com` and `a.b.example.com`, but not
 *   `example.com` itself (list both when both are meant);
 * - anything else must equal the host (`example.com`, `127.0.0.1`, `[::1]`).
 *
 * A glob with a port (`example.com:8080`, `*:8080`) matches only that port;
 * a glob without one matches the host on any port, since a port does not make
 * another site. One trailing dot is ignored on both sides. First matching rule
 * wins, for group rules and limit rules alike.
 */
export function hostMatchesGlob(host: string, glob: string): boolean {
  const target = splitHostPort(host.toLowerCase());
  const rule = splitHostPort(glob.trim().toLowerCase());
  if (rule.port !== undefined && rule.port !== target.port) return false;
  if (rule.host === '*') return true;
  if (rule.host.startsWith('*.')) {
    const suffix = rule.host.slice(1); // ".example.com"
    return target.host.length > suffix.length && target.host.endsWith(suffix);
  }
  return target.host === rule.host;
}

/**
 * Whether `glob` is one of the forms {@link hostMatchesGlob} understands: `*`,
 * `*.suffix` or an exact host, each optionally with `:port`. A `*` anywhere
 * else, whitespace or an empty host is not.
 */
export function isHostGlob(glob: string): boolean {
  const { host } = splitPort(glob.toLowerCase());
  if (host === '*') return true;
  const rest = host.startsWith('*.') ? host.slice(2) : host;
  const exact = rest.endsWith('.') ? rest.slice(0, -1) : rest;
  return exact.length > 0 && !exact.includes('*') && !/\s/.test(glob);
}

function splitHostPort(text: string): { host: string; port: string | undefined } {
  const { host, port } = splitPort(text);
  return { host: host.endsWith('.') ? host.slice(0, -1) : host, port };
}

function splitPort(text: string): { host: string; port: string | undefined } {
  let host = text;
  let port: string | undefined;
  const colon = text.lastIndexOf(':');
  // A port follows the last ':' only when the host part has no other ':'
  // (a bare IPv6 address has several) or is a bracketed IPv6 literal.
  if (colon !== -1 && /^\d+$/.test(text.slice(colon + 1))) {
    const before = text.slice(0, colon);
    if (before.endsWith(']') || !before.includes(':')) {
      host = before;
      port = text.slice(colon + 1);
    }
  }
  return { host, port };
}
