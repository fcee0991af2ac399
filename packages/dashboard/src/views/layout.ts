import type { Flash } from '../flash.js';
import { SafeHtml, html } from '../html.js';

/** What every page needs besides its own content. */
export interface PageContext {
  readonly namespace: string;
  /** Per-response nonce for the inline style and script (see the CSP in `page-routes`). */
  readonly nonce: string;
  /** The CSRF token every form must carry. */
  readonly csrfToken: string;
  readonly flash?: Flash | undefined;
}

const STYLE = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5d6878; --line: #dde2ea; --bg: #f6f7f9; --card: #fff;
  --accent: #2457c5; --danger: #b42318; --ok-bg: #e8f5ec; --ok-fg: #1f6b3a; --err-bg: #fdecea; --err-fg: #8a1c12; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #1d2430; color: #fff; }
header .brand { font-weight: 600; font-size: 16px; }
header .ns { color: #aab4c3; font-size: 13px; }
header nav { display: flex; gap: 16px; margin-left: auto; }
header nav a { color: #dfe6f1; text-decoration: none; }
header nav a[aria-current="page"] { color: #fff; font-weight: 600; border-bottom: 2px solid #fff; }
main { padding: 20px 24px 40px; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 16px; }
h2 { font-size: 15px; margin: 0 0 8px; }
a { color: var(--accent); }
.flash { padding: 10px 14px; border-radius: 6px; margin-bottom: 16px; }
.flash.ok { background: var(--ok-bg); color: var(--ok-fg); }
.flash.error { background: var(--err-bg); color: var(--err-fg); }
.cards { display: flex; flex-wrap: wrap; gap: 16px; margin-bottom: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; min-width: 220px; }
.card .big { font-size: 28px; font-weight: 600; }
.card table td { padding: 2px 8px 2px 0; }
.card table td.n { text-align: right; font-variant-numeric: tabular-nums; }
.toolbar { display: flex; flex-wrap: wrap; align-items: end; gap: 12px; margin-bottom: 12px; }
.toolbar label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
input, select { font: inherit; padding: 4px 6px; border: 1px solid #c3cad5; border-radius: 4px; background: #fff; }
button { font: inherit; padding: 4px 10px; border-radius: 4px; border: 1px solid #c3cad5; background: #fff; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--danger); border-color: #e3b2ad; }
button:hover { filter: brightness(0.95); }
form.inline { display: inline; margin: 0; }
.bulk { margin-left: auto; display: flex; gap: 8px; }
table.entries { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); }
table.entries th, table.entries td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.entries th { background: #eef1f5; font-weight: 600; font-size: 12px; color: var(--muted); white-space: nowrap; }
table.entries td.url { word-break: break-all; min-width: 16em; max-width: 480px; }
table.entries td.id code { word-break: break-all; }
table.entries td.actions { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f0f2f5; border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow: auto; white-space: pre-wrap; word-break: break-all; }
.tag { display: inline-block; padding: 0 6px; border-radius: 10px; background: #eef1f5; font-size: 12px; }
.muted { color: var(--muted); }
.empty { padding: 24px; text-align: center; color: var(--muted); background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.pager { display: flex; gap: 16px; margin-top: 12px; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
dl.fields dt { color: var(--muted); }
dl.fields dd { margin: 0; word-break: break-all; }
.actions-row { display: flex; gap: 8px; margin: 16px 0; }
.spaced { margin-top: 16px; }
.scroll { overflow-x: auto; }
table.groups td.group { word-break: break-all; min-width: 140px; }
table.groups td.actions select { padding: 2px 4px; }
.tag.paused { background: #fdf0d5; color: #7a4b00; }
.tag.done { background: var(--ok-bg); color: var(--ok-fg); }
.note { margin-top: 20px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 16px; margin-bottom: 16px; }
.chart { min-width: 0; }
.chart .plot { width: 100%; min-height: 0; }
.chart .chart-empty { padding: 24px 0; text-align: center; }
/* Narrow windows: the dead-letter rows become cards, the URL on a line of its own. */
@media (max-width: 960px) {
  header { flex-wrap: wrap; gap: 6px 16px; padding: 10px 12px; }
  header nav { margin-left: 0; flex-wrap: wrap; }
  main { padding: 16px 12px 32px; }
  .bulk { margin-left: 0; flex-wrap: wrap; }
  .card { min-width: 0; flex: 1 1 200px; }
  .charts { grid-template-columns: 1fr; }
  table.stack, table.stack tbody { display: block; border: 0; background: none; }
  table.stack thead { display: none; }
  table.stack tr { display: flex; flex-wrap: wrap; gap: 2px 12px; background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 10px; padding: 8px 4px; }
  table.stack td { display: block; border: 0; padding: 2px 8px; text-align: left; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 12px; }
  table.stack td.url { order: -1; flex: 1 1 100%; min-width: 0; max-width: none; font-weight: 500; }
  table.stack td.id { flex: 1 1 100%; }
  table.stack td.actions { flex: 1 1 100%; }
}
`;

/**
 * Asks before submitting any form with `data-confirm`, and refreshes the
 * overview: it fetches the server-rendered `#overview` again and swaps it
 * in, so the figures are rendered (and escaped) in one place. No swap while a
 * select in it has the focus: the operator is choosing a pause length.
 */
const SCRIPT = `
document.addEventListener('submit', function (event) {
  var form = event.target;
  var question = form && form.getAttribute && form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) event.preventDefault();
});
(function () {
  var box = document.getElementById('overview');
  if (!box || !window.fetch || !window.DOMParser) return;
  var every = Number(box.getAttribute('data-refresh-ms')) || 5000;
  function refresh() {
    var focused = document.activeElement;
    if (document.hidden || (focused && focused.tagName === 'SELECT' && box.contains(focused))) return schedule();
    fetch(box.getAttribute('data-refresh-from') || location.pathname, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        var next = text && new DOMParser().parseFromString(text, 'text/html').getElementById('overview');
        if (next) { box.replaceWith(next); box = next; }
      })
      .catch(function () { /* Redis or the dashboard away: keep the last figures and try again. */ })
      .then(schedule);
  }
  function schedule() { setTimeout(refresh, every); }
  schedule();
})();
`;

// Our own constants, not input: safe to embed as they are.
const OWN_STYLE = new SafeHtml(STYLE);
const OWN_SCRIPT = new SafeHtml(SCRIPT);

/** A complete HTML page around `body`. */
export function layout(context: PageContext, page: { title: string; current: 'overview' | 'dead-letters' | 'none'; body: SafeHtml }): string {
  const { flash } = context;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${page.title} · crawlq</title>
<link rel="icon" type="image/svg+xml" href="/queues/static/images/logo.svg">
<style nonce="${context.nonce}">${OWN_STYLE}</style>
</head>
<body>
<header>
  <span class="brand">crawlq</span>
  <span class="ns">namespace <code>${context.namespace}</code></span>
  <nav>
    <a href="/overview"${page.current === 'overview' ? html` aria-current="page"` : ''}>Overview</a>
    <a href="/dead-letters"${page.current === 'dead-letters' ? html` aria-current="page"` : ''}>Dead letters</a>
    <a href="/queues">Queues (Bull Board)</a>
  </nav>
</header>
<main>
${flash === undefined ? '' : html`<div class="flash ${flash.kind}" role="status">${flash.text}</div>`}
${page.body}
</main>
<script nonce="${context.nonce}">${OWN_SCRIPT}</script>
</body>
</html>
`.value;
}
