/**
 * Query parameters whose values are secrets often enough that an alert or an
 * export must not repeat them.
 */
const SECRET_PARAM_NAMES =
  'access[_-]?token|api[_-]?key|apikey|auth|authorization|code|key|pass|passwd|password|secret|session|sessionid|sid|sig|signature|token|x-amz-signature|x-amz-credential|x-amz-security-token';
/** `?token=VALUE` anywhere in a text, parseable URL or not: the value ends where a URL's query value would. */
const SECRET_PARAM = new RegExp(`([?&;](?:${SECRET_PARAM_NAMES})=)[^&#\\s"'<>]*`, 'gi');
const SECRET_HEADER = /\b(authorization|proxy-authorization|cookie|set-cookie|x-api-key)(\s*[:=]\s*)[^\r\n]*/gi;
/** Nothing to redact without one of these: most log lines skip the work. */
const MAYBE_SECRET = new RegExp(`@|authorization|cookie|x-api-key|[?&;](?:${SECRET_PARAM_NAMES})=`, 'i');

/**
 * Where a URL's authority begins: a scheme and what should be `://`, however
 * it was mistyped (`redis//`, `redis:/`, `redis:\\`, `redis::pw@`), with
 * something right after it. A word that merely ends a sentence with a colon
 * (`crawlq: --redis-url: ...`) is followed by a space, so it is no start.
 */
const URL_START = /(?<![A-Za-z\d+.-])[A-Za-z][A-Za-z\d+.-]*(?::[/\\]+|[/\\]{2,}|:(?=:))(?=\S)/g;
/** The first character after which an authority can only be a path, query or fragment, or a `user:` was written. */
const AUTHORITY_END = /[/?#\\:]/g;
/** A user name worth keeping beside the masked password: plain characters only. */
const PLAIN_USER = /^[\w.~%+-]*$/;
const MASK = '***';

/**
 * The one redaction helper: every error message, log line, record, dead
 * letter, e-mail and dashboard view that shows a URL or free text passes it
 * through here (directly, or through the output guard of the apps).
 *
 * A text with the credentials of every URL-looking part masked (`user:***@`,
 * or `***@` when there is no `user:`), whether it parses or not, and with
 * the values of secret-looking query parameters (`token`, `key`, `sig`, ...)
 * and credential headers (`Authorization: ...`) replaced by `***`.
 *
 * A password is not always percent-encoded: it may hold `/`, `#`, `?`, `@`,
 * quotes or spaces. So the userinfo runs to the LAST `@` of the line when a
 * `:` comes before any `/`, `?`, `#` or `\` (a `user:password` however odd
 * the password); without such a `:`, only to the last `@` before the first of
 * those, as in `https://TOKEN@host` (so `https://host/@user/x` keeps its path).
 * This errs towards masking: `http://host:8080/a@b` shows as `http://host:***@b`.
 *
 * With `secretsOf`, a URL whose password is also removed wherever it appears
 * bare (a driver's message may quote it without the URL).
 */
export function redactText(text: string, secretsOf?: string): string {
  if (secretsOf === undefined && !MAYBE_SECRET.test(text)) return text;
  let redacted = text
    .split('\n')
    .map((line) => replaceUserinfo(line, maskUserinfo))
    .join('\n')
    .replace(SECRET_PARAM, `$1${MASK}`)
    .replace(SECRET_HEADER, `$1$2${MASK}`);
  for (const secret of secretsOf === undefined ? [] : passwordsOf(secretsOf)) {
    // Three characters at least: masking every `a` of a message would say nothing and hide little.
    if (secret.length >= 3) redacted = redacted.split(secret).join(MASK);
  }
  return redacted;
}

/**
 * One URL to show (a dead letter's, an e-mail's link): what {@link redactText}
 * masks, then left out, so the URL stays one to click; secret query values `***`.
 */
export function redactUrl(url: string): string {
  return withoutUserinfo(redactText(url));
}

/**
 * A value given as a connection URL (Redis, PostgreSQL, SMTP, a dashboard):
 * everything before its last `@` after the scheme is credentials, whatever
 * the spelling, scheme or none (`:pw@host`, `redis//:p/w@host`).
 */
export function redactConnectionUrl(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return redactText(value);
  URL_START.lastIndex = 0;
  const start = URL_START.exec(value);
  const begin = start !== null && start.index === 0 ? start[0].length : 0;
  return redactText(`${value.slice(0, begin)}${maskUserinfo(value.slice(begin, at))}${value.slice(at)}`);
}

/**
 * The URL without `user:password@` and nothing else changed: for URLs written
 * to records (`finalUrl`, `redirectTo`), which must stay the URL that was
 * fetched, only without credentials. A `scheme://` URL that parses is read
 * as the parser reads it, as a fetched URL was (an `@` of its path stays:
 * `http://h:8080/a@b` is host h); anything else loses what {@link redactText}
 * would mask.
 */
export function withoutUserinfo(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  // An opaque `redis::pw@host` parses too, as a path: only a `scheme://` authority is the parser's to read.
  if (parsed === undefined || parsed.host === '' || !/^[a-z][a-z\d+.-]*:\/\//i.test(url)) return replaceUserinfo(url, () => undefined);
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}

/**
 * Every line of `text` redacted; a line that is a JSON object (a log line) is
 * redacted string by string, so it stays valid JSON: a mask must not run
 * across its fields. For whole lines of output, such as the apps' stderr.
 */
export function redactOutput(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith('{')) return redactText(line);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return redactText(line);
      }
      const redacted = redactStrings(value);
      return redacted === value ? line : JSON.stringify(redacted);
    })
    .join('\n');
}

/** `value` with every string in it redacted; the same object when nothing changed. */
function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value !== 'object' || value === null) return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, inner]) => {
    const redacted = redactStrings(inner);
    if (redacted !== inner) changed = true;
    return [key, redacted] as const;
  });
  if (!changed) return value;
  return Array.isArray(value) ? entries.map(([, inner]) => inner) : Object.fromEntries(entries);
}

/**
 * `line` with the userinfo of each URL in it, and its `@`, replaced by
 * `replace(userinfo)` followed by `@`; undefined drops both.
 */
function replaceUserinfo(line: string, replace: (userinfo: string) => string | undefined): string {
  const lastAt = line.lastIndexOf('@');
  if (lastAt < 0) return line;
  let out = '';
  let from = 0;
  URL_START.lastIndex = 0;
  for (let start = URL_START.exec(line); start !== null; start = URL_START.exec(line)) {
    const begin = start.index + start[0].length;
    if (begin > lastAt) break;
    const at = userinfoEnd(line, begin, lastAt);
    if (at === undefined) continue;
    const replacement = replace(line.slice(begin, at));
    out += line.slice(from, begin) + (replacement === undefined ? '' : `${replacement}@`);
    from = at + 1;
    URL_START.lastIndex = from;
  }
  return out + line.slice(from);
}

/** Where the userinfo that starts at `begin` ends (its `@`), if it has one; see {@link redactText}. */
function userinfoEnd(line: string, begin: number, lastAt: number): number | undefined {
  AUTHORITY_END.lastIndex = begin;
  const end = AUTHORITY_END.exec(line);
  // `user:` first: whatever follows up to the last `@` is the password.
  if (end?.[0] === ':') return lastAt;
  // No `user:`: a bare user name (a token), which holds no `/`, `?`, `#` or space.
  const limit = end === null ? line.length : end.index;
  const at = line.lastIndexOf('@', limit - 1);
  if (at < begin || /\s/.test(line.slice(begin, at))) return undefined;
  return at;
}

function maskUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(':');
  if (colon < 0) return MASK;
  const user = userinfo.slice(0, colon);
  return PLAIN_USER.test(user) ? `${user}:${MASK}` : MASK;
}

/** The password of `url` as written and as decoded, however the URL is spelled. */
function passwordsOf(url: string): string[] {
  const found = new Set<string>();
  replaceUserinfo(url, (userinfo) => {
    const colon = userinfo.indexOf(':');
    if (colon >= 0) found.add(userinfo.slice(colon + 1));
    return undefined;
  });
  for (const password of [...found]) {
    try {
      found.add(decodeURIComponent(password));
    } catch {
      // Not percent-encoded: as written is all there is.
    }
  }
  return [...found];
}
