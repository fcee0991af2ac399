/**
 * Whether `host` matches a host glob: `'*'` matches every host, `'*.example.com'`
 * matches `a.example.com` and `a.b.example.com` but not `example.com`, and any
 * other glob matches only the identical host. Case-insensitive; a trailing dot
 * (fully qualified form) is ignored on both sides.
 */
export function matchHostGlob(host: string, glob: string): boolean {
  const h = canonical(host);
  const g = canonical(glob);
  if (g === '*') return true;
  if (g.startsWith('*.')) {
    const suffix = g.slice(1); // '.example.com': requires at least one label in front
    return h.length > suffix.length && h.endsWith(suffix);
  }
  return h === g;
}

/** Whether `glob` is one of the forms `matchHostGlob` understands (`*`, `*.suffix`, exact). */
export function isHostGlob(glob: string): boolean {
  if (glob === '*') return true;
  const rest = canonical(glob.startsWith('*.') ? glob.slice(2) : glob);
  return rest.length > 0 && !rest.includes('*') && !/\s/.test(rest);
}

function canonical(value: string): string {
  const lower = value.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
