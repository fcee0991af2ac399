/**
 * Query parameters whose values are secrets often enough that an alert or an
 * export must not repeat them.
 */
const SECRET_PARAMS = /^(?:access[_-]?token|api[_-]?key|apikey|auth|authorization|code|key|pass|passwd|password|secret|session|sessionid|sid|sig|signature|token|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;

const URL_IN_TEXT = /\b[a-z][a-z\d+.-]*:\/\/[^\s"'<>]+/gi;
const SECRET_HEADER = /\b(authorization|proxy-authorization|cookie|set-cookie|x-api-key)(\s*[:=]\s*)[^\r\n]*/gi;

/**
 * The one redaction helper (#10): every error message, log line, record, dead
 * letter, e-mail and dashboard view that shows a URL passes it through here.
 *
 * The URL without `user:password@`, and with the values of secret-looking
 * query parameters (`token`, `key`, `sig`, ...) replaced by `***`.
 * Text that does not parse as a URL only loses its userinfo.
 */
export function redactUrl(url: string): string {
  const stripped = withoutUserinfo(url);
  let parsed: URL;
  try {
    parsed = new URL(stripped);
  } catch {
    return stripped;
  }
  let changed = false;
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMS.test(name)) {
      parsed.searchParams.set(name, '***');
      changed = true;
    }
  }
  // Re-serialise only when needed: URL.toString() would otherwise re-encode
  // an already normalised URL and make it differ from the crawl job's.
  return changed ? parsed.toString() : stripped;
}

/**
 * The URL without `user:password@` and nothing else changed: for URLs written
 * to records (`finalUrl`, `redirectTo`), which must stay the URL that was
 * fetched, only without credentials (#10).
 */
export function withoutUserinfo(url: string): string {
  // Greedy up to the authority's last `@`: a password may hold an `@` itself.
  return url.replace(/^([a-z][a-z\d+.-]*:\/\/)[^/?#\s]*@/i, '$1');
}

/**
 * A free-text message with every URL passed through {@link redactUrl} and the
 * values of credential headers (`Authorization`, `Cookie`, ...) removed.
 */
export function redactText(text: string): string {
  return text.replace(URL_IN_TEXT, (url) => redactUrl(url)).replace(SECRET_HEADER, '$1$2***');
}
