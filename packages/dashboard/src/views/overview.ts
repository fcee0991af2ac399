import { formatRate } from '@crawlq/config';
import { formatBytes, type GroupOverview } from '@crawlq/crawl-control';
import { CHART_SCRIPT_PATH, CHART_STYLE_PATH } from '../chart-assets.js';
import { CSRF_FIELD } from '../csrf-token.js';
import type { CrawlOverview } from '../crawl-overview.js';
import { html, SafeHtml } from '../html.js';
import { pausedQueueNote } from './format.js';
import { layout, type PageContext } from './layout.js';

/** How often the page fetches itself again and swaps in the new figures. */
export const OVERVIEW_REFRESH_MS = 5_000;

/** The pause lengths the page offers (the fleet's policy may cap them). */
export const PAUSE_CHOICES: readonly { readonly ms: number; readonly label: string }[] = [
  { ms: 60_000, label: '1 min' },
  { ms: 600_000, label: '10 min' },
  { ms: 3_600_000, label: '1 h' },
];

function round(value: number): string {
  return String(Math.round(value * 100) / 100);
}

function clock(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function groupPath(group: string, action: 'pause' | 'resume'): string {
  return `/groups/${encodeURIComponent(group)}/${action}`;
}

function groupActions(group: GroupOverview, paused: boolean, csrfToken: string): SafeHtml {
  const token = html`<input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}">`;
  return paused
    ? html`<form class="inline" method="post" action="${groupPath(group.group, 'resume')}">${token}<button type="submit" class="primary" title="Resume ${group.group} on every worker">Resume</button></form>`
    : html`<form class="inline" method="post" action="${groupPath(group.group, 'pause')}">${token}<select name="for" aria-label="Pause ${group.group} for">${PAUSE_CHOICES.map(
        (choice) => html`<option value="${choice.ms}"${choice.ms === 600_000 ? html` selected` : ''}>${choice.label}</option>`,
      )}</select> <button type="submit" title="Pause ${group.group} on every worker">Pause</button></form>`;
}

function groupRow(group: GroupOverview, now: number, csrfToken: string): SafeHtml {
  const paused = group.pausedUntil !== null && group.pausedUntil > now;
  return html`<tr data-group="${group.group}">
  <td class="group">${group.group}</td>
  <td>${formatRate(group.limits.rate)}</td>
  <td class="num" data-testid="pace">${group.paceMs > 0 ? `${round(1000 / group.paceMs)}/s` : '–'}${group.paceFactor < 1 ? html` <span class="tag" title="${group.paceReason ?? ''}">slowed to ${round(group.paceFactor)}</span>` : ''}</td>
  <td class="num">${group.limits.burst}</td>
  <td class="num">${group.limits.concurrency ?? 'unlimited'}</td>
  <td class="num" data-testid="in-flight">${group.inFlight}</td>
  <td data-testid="paused">${paused ? html`<span class="tag paused">paused</span> until ${clock(group.pausedUntil ?? now)}${group.pauseReason === null ? '' : ` (${group.pauseReason})`}` : html`<span class="muted">no</span>`}</td>
  <td>${group.waitingFor ?? html`<span class="muted">–</span>`}</td>
  <td class="num">${group.admitted}</td>
  <td class="num">${group.deferred}</td>
  <td class="actions">${groupActions(group, paused, csrfToken)}</td>
</tr>`;
}

/** Each group's continuous crawl figures (shown once a revisit policy scheduled a URL); the figures are those of the Revisits card, per group. */
function revisitGroupsTable(read: CrawlOverview['revisitGroups']): SafeHtml | '' {
  if (read.groups.length === 0) return '';
  return html`<h2>Revisits by group</h2>
<p class="muted">Continuous crawl figures of each group since the crawl began, as <code>crawlq group list --revisits</code> shows them; due counts are schedule entries due now and within the next hour${read.dueComplete ? '' : ' (lower bounds: more entries are due within the hour than one read takes)'}.</p>
<div class="scroll"><table class="entries revisit-groups">
  <thead><tr><th>Group</th><th title="URLs fetched at least once and scheduled again (retired ones not counted)">Known</th><th title="Schedule entries due now">Due now</th><th title="Schedule entries due within the next hour, those due now included">Due in 1 h</th><th title="Revisits that found new content">Changed</th><th title="Revisits that found the same content: 304 answers plus 200s with the same content signature">Unchanged (304)</th><th title="404/410 answers">Gone</th><th title="Body bytes 304 answers did not send">Bytes saved</th></tr></thead>
  <tbody>${read.groups.map(
    (figures) => html`<tr data-revisit-group="${figures.group}">
  <td class="group">${figures.group}</td>
  <td class="num" data-testid="revisit-group-known">${figures.known}</td>
  <td class="num" data-testid="revisit-group-due-now">${figures.dueNow ?? '–'}</td>
  <td class="num" data-testid="revisit-group-due-hour">${figures.dueNextHour ?? '–'}</td>
  <td class="num" data-testid="revisit-group-changed">${figures.changed}</td>
  <td class="num" data-testid="revisit-group-unchanged">${figures.unchanged + figures.notModified} (${figures.notModified})</td>
  <td class="num">${figures.gone}</td>
  <td class="num" data-testid="revisit-group-bytes-saved">${formatBytes(figures.bytesSaved)}</td>
</tr>`,
  )}</tbody>
</table></div>`;
}

function countRow(row: { label: string; value: number; testId: string; link?: string }): SafeHtml {
  const { label, link } = row;
  return html`<tr><td>${link === undefined ? label : html`<a href="${link}">${label}</a>`}</td><td class="n" data-testid="${row.testId}">${row.value}</td></tr>`;
}

/** The continuous crawl's card (shown once a revisit policy scheduled a URL): what each figure means is in its title and in docs/05-continuous-crawling.md. */
function revisitCard(revisits: CrawlOverview['status']['revisits']): SafeHtml | '' {
  if (revisits.known === 0 && revisits.fetched === 0) return '';
  const unchanged = revisits.unchanged + revisits.notModified;
  return html`<section class="card" aria-label="Revisits"><h2>Revisits</h2><table>
    <tr><td title="URLs fetched at least once and scheduled again (retired ones not counted)">known URLs</td><td class="n" data-testid="revisit-known">${revisits.known}</td></tr>
    <tr><td title="Schedule entries due now: waiting to be handed to their groups' backlogs">due now</td><td class="n" data-testid="revisit-due-now">${revisits.dueNow}</td></tr>
    <tr><td title="Schedule entries due within the next hour, those due now included">due in the next hour</td><td class="n" data-testid="revisit-due-hour">${revisits.dueNextHour}</td></tr>
    <tr><td title="Revisits that found new content (parsed, recorded, links followed)">changed</td><td class="n" data-testid="revisit-changed">${revisits.changed}</td></tr>
    <tr><td title="Revisits that found the same content: 304 answers plus 200s with the same content signature (no parse, no record)">unchanged</td><td class="n" data-testid="revisit-unchanged">${unchanged} (${revisits.notModified} × 304)</td></tr>
    <tr><td title="404/410 answers; a URL is retired after 3 in a row">gone / retired</td><td class="n" data-testid="revisit-gone">${revisits.gone} / ${revisits.retired}</td></tr>
    <tr><td title="Body bytes 304 answers did not send (each the last full body's size)">bytes saved</td><td class="n" data-testid="revisit-bytes-saved">${formatBytes(revisits.bytesSaved)}</td></tr>
  </table></section>`;
}

/** Where the page fetches its refreshed `#overview` from. */
export const OVERVIEW_FRAGMENT_PATH = '/overview/fragment';

/** Where the charts fetch their series from. */
export const HISTORY_PATH = '/api/history';

/** The charts: what they show, and the `data-chart` name the script draws into. */
const CHARTS: readonly { readonly name: string; readonly title: string; readonly note: string }[] = [
  { name: 'pages', title: 'Pages per second', note: 'pages finished, fleet-wide' },
  { name: 'statuses', title: 'Status mix', note: 'pages per second by HTTP status class' },
  { name: 'pace', title: 'Groups: pace', note: 'requests admitted per second, busiest groups' },
  { name: 'waits', title: 'Groups: waits', note: 'requests held back per second (rate, concurrency, pause)' },
];

/**
 * Draws the charts with uPlot from `GET /api/history`, and again every
 * refresh period. Each chart's box says how many points it drew
 * (`data-points`), for people's tools and the browser test alike. Errors in
 * drawing are not swallowed: they reach the console.
 */
const CHART_SCRIPT = new SafeHtml(`
(function () {
  var root = document.getElementById('charts');
  if (!root || !window.uPlot || !window.fetch) return;
  var every = Number(root.getAttribute('data-refresh-ms')) || 5000;
  var PALETTE = ['#2457c5', '#d9480f', '#2b8a3e', '#ae3ec9', '#1098ad', '#f08c00', '#c92a2a', '#5c7cfa'];
  var STATUS = { '2xx': '#2b8a3e', '3xx': '#1c7ed6', '4xx': '#f08c00', '5xx': '#c92a2a' };
  var shown = {};
  function draw(name, labels, colors, columns, x) {
    var box = root.querySelector('[data-chart="' + name + '"]');
    var plot = box.querySelector('.plot');
    if (shown[name]) { shown[name].destroy(); delete shown[name]; }
    var points = 0;
    columns.forEach(function (column) { column.forEach(function (value) { if (value !== null) points += 1; }); });
    box.setAttribute('data-points', String(points));
    box.setAttribute('data-series', String(columns.length));
    box.querySelector('.chart-empty').hidden = points > 0;
    if (points === 0) return;
    var series = [{}].concat(labels.map(function (label, index) { return { label: label, stroke: colors[index], width: 2 }; }));
    shown[name] = new uPlot({ width: Math.max(plot.clientWidth, 240), height: 180, series: series, scales: { x: { time: true } }, axes: [{}, { size: 48 }], legend: { live: false } }, [x].concat(columns), plot);
  }
  function render(history) {
    var x = history.at.map(function (at) { return at / 1000; });
    draw('pages', ['pages/s'], [PALETTE[0]], [history.pagesPerSecond], x);
    var keys = Object.keys(history.statuses).sort();
    draw('statuses', keys, keys.map(function (key, index) { return STATUS[key] || PALETTE[(index + 3) % PALETTE.length]; }), keys.map(function (key) { return history.statuses[key]; }), x);
    var groups = history.groups.map(function (group) { return group.group; });
    var colors = groups.map(function (_group, index) { return PALETTE[index % PALETTE.length]; });
    draw('pace', groups, colors, history.groups.map(function (group) { return group.admitted; }), x);
    draw('waits', groups, colors, history.groups.map(function (group) { return group.deferred; }), x);
  }
  function schedule() { setTimeout(load, every); }
  function load() {
    if (document.hidden) return schedule();
    fetch(root.getAttribute('data-history-from'), { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (response) { return response.ok ? response.json() : null; }, function () { return null; })
      .then(function (history) { if (history) render(history); })
      .finally(schedule);
  }
  load();
})();
`);

/** The charts' boxes, outside `#overview` so that its refresh leaves them be; the script fills them. */
function charts(nonce: string): SafeHtml {
  return html`<link rel="stylesheet" href="${CHART_STYLE_PATH}" nonce="${nonce}">
<section id="charts" class="charts" aria-label="Charts" data-refresh-ms="${OVERVIEW_REFRESH_MS}" data-history-from="${HISTORY_PATH}">
${CHARTS.map(
  (chart) => html`<div class="card chart" data-chart="${chart.name}" data-testid="chart-${chart.name}"><h2>${chart.title}</h2><div class="muted">${chart.note}</div>
  <div class="plot"></div><div class="chart-empty muted">collecting: the first points come once the dashboard has read the crawl twice, a second or more apart</div></div>`,
)}
</section>
<script nonce="${nonce}" src="${CHART_SCRIPT_PATH}"></script>
<script nonce="${nonce}">${CHART_SCRIPT}</script>`;
}

/** The overview: charts over time, progress, rate, statuses and the politeness groups with pause/resume. */
export function overviewPage(context: PageContext, overview: CrawlOverview): string {
  const body = html`<h1>Crawl overview</h1>
${charts(context.nonce)}
${overviewFragment(context, overview)}
${pausedQueueNote()}`;
  return layout(context, { title: 'Overview', current: 'overview', body });
}

/**
 * The part of the overview that refreshes: the page fetches it alone (a whole
 * page parsed in the browser would trip the CSP on its style's new nonce).
 */
export function overviewFragment(context: Pick<PageContext, 'csrfToken'>, overview: CrawlOverview): SafeHtml {
  const { status, rate, groups } = overview;
  const byStatus = Object.entries(status.byStatus).sort(([a], [b]) => a.localeCompare(b));
  const skipped = Object.entries(status.skipped).sort(([a], [b]) => a.localeCompare(b));
  const global = groups.global;
  return html`<div id="overview" data-refresh-ms="${OVERVIEW_REFRESH_MS}" data-refresh-from="${OVERVIEW_FRAGMENT_PATH}" data-read-at="${overview.at}">
<p class="muted">Read at ${clock(overview.at)}; refreshes every ${OVERVIEW_REFRESH_MS / 1000} s. ${
    status.done ? html`<span class="tag done" data-testid="done">done: nothing left to crawl</span>` : html`<span class="tag" data-testid="done">crawling</span>`
  }</p>
<div class="cards">
  <section class="card" aria-label="Progress"><h2>Progress</h2><table>
    ${countRow({ label: 'backlog', value: status.backlog, testId: 'backlog' })}
    ${countRow({ label: 'waiting', value: status.waiting, testId: 'waiting' })}
    ${countRow({ label: 'delayed', value: status.delayed, testId: 'delayed' })}
    ${countRow({ label: 'active', value: status.active, testId: 'active' })}
    ${countRow({ label: 'completed (pages)', value: status.pages, testId: 'completed' })}
    ${countRow({ label: 'failed', value: status.failed, testId: 'failed' })}
    ${countRow({ label: 'dead-lettered', value: status.deadLettered, testId: 'dead-lettered', link: '/dead-letters' })}
  </table></section>
  <section class="card" aria-label="Rate"><h2>Rate</h2>${
    rate === null
      ? html`<div class="big" data-testid="rate">–</div><div class="muted">measuring; shown from the next refresh</div>`
      : html`<div class="big" data-testid="rate">${round(rate.perSecond)}</div><div class="muted">pages/s over the last ${Math.round(rate.overMs / 1000)} s</div>`
  }</section>
  ${revisitCard(status.revisits)}
  <section class="card" aria-label="Statuses"><h2>Statuses</h2>${
    byStatus.length === 0 && skipped.length === 0
      ? html`<span class="muted">no pages yet</span>`
      : html`<table>${byStatus.map(([key, count]) => countRow({ label: key, value: count, testId: `status-${key}` }))}${skipped.map(([key, count]) => countRow({ label: `skipped (${key})`, value: count, testId: `skipped-${key}` }))}</table>`
  }</section>
</div>
<h2>Politeness groups</h2>
<p class="muted">Limits in force${groups.policyPublished ? '' : ' (no crawl has published limits in this namespace yet: defaults shown)'}; a pause holds the group on every worker.
Global cap: ${global.rate === null ? 'none' : `${formatRate(global.rate)} (admitted ${global.admitted}, deferred ${global.deferred})`}.</p>
${
  groups.groups.length === 0
    ? html`<div class="empty">No groups yet.</div>`
    : html`<div class="scroll"><table class="entries groups">
  <thead><tr><th>Group</th><th>Rate</th><th>Pace</th><th>Burst</th><th>Concurrency</th><th>In flight</th><th>Paused</th><th>Waiting for</th><th>Admitted</th><th>Deferred</th><th>Actions</th></tr></thead>
  <tbody>${groups.groups.map((group) => groupRow(group, overview.at, context.csrfToken))}</tbody>
</table></div>`
}
${revisitGroupsTable(overview.revisitGroups)}
</div>`;
}
