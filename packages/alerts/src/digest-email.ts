import type { Digest } from './digest.js';
import { escapeHtml, redactUrl } from '@crawlq/urls';

/** Rows per table in an alert e-mail. */
export const MAX_DIGEST_ROWS = 20;

/** What the e-mail says beyond the digest itself. */
export interface DigestEmailOptions {
  /** Shell command an operator runs to review entries, e.g. `pnpm crawlq dlq list`. */
  readonly reviewCommand: string;
  readonly dashboardUrl?: string | undefined;
}

/** A rendered alert e-mail. */
export interface DigestEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/**
 * Renders a digest as an e-mail with a plain-text and an HTML part: counts by
 * group and by reason (largest first, top {@link MAX_DIGEST_ROWS}), example URLs,
 * the time range and how to review. URLs are redacted again and everything in
 * the HTML part is escaped: groups and URLs come from crawled pages.
 */
export function renderDigestEmail(digest: Digest, options: DigestEmailOptions): DigestEmail {
  const pages = digest.total === 1 ? '1 page' : `${digest.total} pages`;
  const subject = `[crawlq] ${pages} dead-lettered (namespace ${oneLine(digest.namespace)})`;
  const groups = topRows(digest.byGroup);
  const reasons = topRows(digest.byReason);
  const examples = digest.examples.map((example) => ({
    url: redactUrl(oneLine(example.url)),
    label: example.status === null ? example.reason : `${example.reason}, status ${example.status}`,
  }));
  const dashboard = options.dashboardUrl === undefined ? undefined : redactUrl(options.dashboardUrl);
  const range = `${digest.firstAt} .. ${digest.lastAt}`;

  const text = [
    `${pages} dead-lettered in namespace "${oneLine(digest.namespace)}" between ${digest.firstAt} and ${digest.lastAt}.`,
    '',
    `By group (${groups.shownLabel}):`,
    ...table(groups.rows),
    '',
    `By reason (${reasons.shownLabel}):`,
    ...table(reasons.rows),
    '',
    `Examples (${examples.length} of ${digest.total}):`,
    ...examples.map((example) => `  ${example.url}  [${example.label}]`),
    '',
    'Review:',
    `  ${oneLine(options.reviewCommand)}`,
    ...(dashboard === undefined ? [] : [`  Dashboard: ${dashboard}`]),
    '',
    `Digest ${digest.id}, cut at ${digest.takenAt}. Entries stay in the dead-letter queue until retried or purged.`,
    '',
  ].join('\n');

  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p><strong>${escapeHtml(pages)}</strong> dead-lettered in namespace <code>${escapeHtml(digest.namespace)}</code>, ${escapeHtml(range)}.</p>`,
    `<h3>By group (${escapeHtml(groups.shownLabel)})</h3>`,
    htmlTable(['Group', 'Pages'], groups.rows),
    `<h3>By reason (${escapeHtml(reasons.shownLabel)})</h3>`,
    htmlTable(['Reason', 'Pages'], reasons.rows),
    `<h3>Examples (${examples.length} of ${digest.total})</h3>`,
    '<ul>',
    ...examples.map((example) => `<li><code>${escapeHtml(example.url)}</code> (${escapeHtml(example.label)})</li>`),
    '</ul>',
    '<h3>Review</h3>',
    `<p><code>${escapeHtml(options.reviewCommand)}</code></p>`,
    ...(dashboard === undefined ? [] : [`<p>Dashboard: <a href="${escapeHtml(dashboard)}">${escapeHtml(dashboard)}</a></p>`]),
    `<p style="color:#666">Digest ${escapeHtml(digest.id)}, cut at ${escapeHtml(digest.takenAt)}. Entries stay in the dead-letter queue until retried or purged.</p>`,
    '</body></html>',
  ].join('\n');

  return { subject, text, html };
}

function topRows(counts: Readonly<Record<string, number>>): { rows: [string, number][]; shownLabel: string } {
  const all = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const rows = all.slice(0, MAX_DIGEST_ROWS).map(([name, count]): [string, number] => [oneLine(name), count]);
  const rest = all.slice(MAX_DIGEST_ROWS);
  if (rest.length > 0) rows.push([`(${rest.length} more)`, rest.reduce((sum, [, count]) => sum + count, 0)]);
  return { rows, shownLabel: all.length > MAX_DIGEST_ROWS ? `top ${MAX_DIGEST_ROWS} of ${all.length}` : `${all.length}` };
}

function table(rows: readonly [string, number][]): string[] {
  const width = Math.min(60, Math.max(0, ...rows.map(([name]) => name.length)));
  return rows.map(([name, count]) => `  ${name.padEnd(width)}  ${String(count).padStart(6)}`);
}

function htmlTable(headers: readonly [string, string], rows: readonly [string, number][]): string {
  const head = `<tr><th align="left">${escapeHtml(headers[0])}</th><th align="right">${escapeHtml(headers[1])}</th></tr>`;
  const body = rows.map(([name, count]) => `<tr><td>${escapeHtml(name)}</td><td align="right">${count}</td></tr>`);
  return ['<table cellpadding="4">', head, ...body, '</table>'].join('\n');
}

/** Control characters (a newline in a group name) must not forge lines or headers. */
function oneLine(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}
