/**
 * Whether a `Content-Type` names an HTML document: `text/html` or
 * `application/xhtml+xml`, ignoring case, whitespace and parameters
 * (`Text/HTML; charset=UTF-8` is HTML). A missing header is not HTML: the
 * caller decides whether to sniff.
 */
export function isHtml(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const essence = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return essence === 'text/html' || essence === 'application/xhtml+xml';
}
