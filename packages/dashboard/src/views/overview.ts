import { formatRate } from '@crawlq/config';
import type { GroupOverview } from '@crawlq/crawler';
import { CSRF_FIELD } from '../csrf-token.js';
import type { CrawlOverview } from '../crawl-overview.js';
import { html, type SafeHtml } from '../html.js';
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

function countRow(row: { label: string; value: number; testId: string; link?: string }): SafeHtml {
  const { label, link } = row;
  return html`<tr><td>${link === undefined ? label : html`<a href="${link}">${label}</a>`}</td><td class="n" data-testid="${row.testId}">${row.value}</td></tr>`;
}

function bytes(value: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let scaled = value;
  let unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? scaled : scaled.toFixed(1)} ${units[unit]}`;
}

/** The continuous crawl's card (shown once a revisit policy scheduled a URL): what each figure means is in its title and the README. */
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
    <tr><td title="Body bytes 304 answers did not send (each the last full body's size)">bytes saved</td><td class="n" data-testid="revisit-bytes-saved">${bytes(revisits.bytesSaved)}</td></tr>
  </table></section>`;
}

/** Where the page fetches its refreshed `#overview` from. */
export const OVERVIEW_FRAGMENT_PATH = '/overview/fragment';

/** The overview: progress, rate, statuses and the politeness groups with pause/resume. */
export function overviewPage(context: PageContext, overview: CrawlOverview): string {
  const body = html`<h1>Crawl overview</h1>
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
</div>`;
}
