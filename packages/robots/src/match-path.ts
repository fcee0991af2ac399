// Characters that stay as they are when comparing: RFC 3986 unreserved and
// reserved characters. Everything else is percent-encoded (see canonicalPath).
const PLAIN = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]*$/;
const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * Brings a URL path (with query) or a robots.txt path pattern into one spelling
 * so that the two can be compared octet by octet (RFC 9309 2.2.2):
 * escapes of unreserved characters are decoded (`%7E` → `~`), other escapes get
 * upper-case hex digits, non-ASCII characters are UTF-8 percent-encoded, and
 * ASCII characters that are neither reserved nor unreserved (space, `"`, `<`,
 * `|`...) are percent-encoded. A `%` not followed by two hex digits becomes `%25`.
 * The same function is applied to both sides, so where a URL parser and a
 * robots.txt author spell a character differently they still agree.
 */
export function canonicalPath(text: string): string {
  if (PLAIN.test(text) && !text.includes('%')) return text;
  let out = '';
  for (let index = 0; index < text.length; ) {
    const char = text[index] ?? '';
    if (char === '%') {
      const hex = text.slice(index + 1, index + 3);
      if (HEX.test(hex)) {
        const code = Number.parseInt(hex, 16);
        out += isUnreserved(code) ? String.fromCharCode(code) : `%${hex.toUpperCase()}`;
        index += 3;
      } else {
        out += '%25';
        index += 1;
      }
      continue;
    }
    const code = text.codePointAt(index) ?? 0;
    const width = code > 0xffff ? 2 : 1;
    if (code < 0x80) {
      out += PLAIN.test(char) ? char : `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
    } else {
      out += encodeCodePoint(text.slice(index, index + width));
    }
    index += width;
  }
  return out;
}

function encodeCodePoint(char: string): string {
  try {
    return encodeURIComponent(char);
  } catch {
    // A lone surrogate (binary garbage decoded as text) has no UTF-8 form.
    return '%EF%BF%BD';
  }
}

function isUnreserved(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2d ||
    code === 0x2e ||
    code === 0x5f ||
    code === 0x7e
  );
}
