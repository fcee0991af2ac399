const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/**
 * Escapes text for an HTML element body or a quoted attribute value. Here,
 * beside `redactUrl`, because it is the other half of showing crawled text
 * safely: the dashboard and the alert e-mails both use it.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char);
}
