import type { DeadLetterEntry, DeadLetterStats } from '@crawlq/dead-letter';
import { groupMatches, listSearch, type ListQuery } from '../filters.js';
import { html, type SafeHtml } from '../html.js';
import { actionForm, entryPath, pausedQueueNote, time, urlLink } from './format.js';
import { layout, type PageContext } from './layout.js';

/** Rows of each counts card before "N more". */
const TOP_ROWS = 15;

export interface DeadLetterListView {
  readonly query: ListQuery;
  readonly entries: readonly DeadLetterEntry[];
  /** More entries match after this page. */
  readonly hasMore: boolean;
  readonly stats: DeadLetterStats;
}

function countsCard(title: string, counts: Record<string, number>, link: (key: string) => string): SafeHtml {
  const rows = Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  const shown = rows.slice(0, TOP_ROWS);
  const rest = rows.slice(TOP_ROWS);
  return html`<section class="card" aria-label="${title}">
  <h2>${title}</h2>
  ${
    rows.length === 0
      ? html`<span class="muted">none</span>`
      : html`<table>${shown.map(([key, count]) => html`<tr><td><a href="${link(key)}">${key}</a></td><td class="n">${count}</td></tr>`)}
    ${rest.length === 0 ? '' : html`<tr><td class="muted">${rest.length} more</td><td class="n">${rest.reduce((sum, [, count]) => sum + count, 0)}</td></tr>`}</table>`
  }
</section>`;
}

function row(entry: DeadLetterEntry, context: PageContext, query: ListQuery): SafeHtml {
  const filter = { ...(query.group === undefined ? {} : { group: query.group }), ...(query.reason === undefined ? {} : { reason: query.reason }) };
  return html`<tr data-id="${entry.id}">
  <td class="id" data-label="ID"><a href="${entryPath(entry.id)}"><code>${entry.id}</code></a></td>
  <td class="url">${urlLink(entry.url)}</td>
  <td data-label="Group">${entry.group}</td>
  <td data-label="Reason"><span class="tag">${entry.reason}</span></td>
  <td class="num" data-label="Status">${entry.status ?? '–'}</td>
  <td class="num" data-label="Attempts">${entry.attempts}</td>
  <td data-label="Failed at">${time(entry.lastFailedAt)}</td>
  <td class="actions">${actionForm({ action: entryPath(entry.id, 'retry'), label: 'Retry', csrfToken: context.csrfToken, filter, style: 'primary', title: `Retry ${entry.url}` })}
    ${actionForm({ action: entryPath(entry.id, 'purge'), label: 'Purge', csrfToken: context.csrfToken, filter, style: 'danger', confirm: `Delete the dead letter for ${entry.url}?`, title: `Purge ${entry.url}` })}</td>
</tr>`;
}

/** The dead-letter list: counts, filters, bulk actions and one row per entry. */
export function deadLetterListPage(context: PageContext, view: DeadLetterListView): string {
  const { query, entries, stats } = view;
  const filter = { ...(query.group === undefined ? {} : { group: query.group }), ...(query.reason === undefined ? {} : { reason: query.reason }) };
  const filtered = query.group !== undefined || query.reason !== undefined;
  const matching =
    query.group !== undefined && query.reason === undefined
      ? Object.entries(stats.byGroup).reduce((sum, [group, count]) => sum + (groupMatches(query.group ?? '', group) ? count : 0), 0)
      : query.reason !== undefined && query.group === undefined
        ? (stats.byReason[query.reason] ?? 0)
        : filtered
          ? undefined
          : stats.total;
  const scope = filtered ? 'in this filter' : '';
  const countText = matching === undefined ? '' : ` (${matching})`;
  const bulkFields: Record<string, string> = filtered ? {} : { all: '1' };
  const groups = Object.keys(stats.byGroup).sort();
  const reasons = Object.keys(stats.byReason).sort();
  const body = html`<h1>Dead letters</h1>
<div class="cards">
  <section class="card" aria-label="Total"><h2>Total</h2><div class="big" data-testid="total">${stats.total}</div><div class="muted">entries waiting for review</div></section>
  ${countsCard('By group', stats.byGroup, (group) => `/dead-letters${listSearch({ group })}`)}
  ${countsCard('By reason', stats.byReason, (reason) => `/dead-letters${listSearch({ reason })}`)}
</div>
<div class="toolbar">
  <form method="get" action="/dead-letters" class="toolbar" role="search">
    <label>Group <input name="group" list="groups" value="${query.group ?? ''}" placeholder="any"></label>
    <datalist id="groups">${groups.slice(0, 500).map((group) => html`<option value="${group}"></option>`)}</datalist>
    <label>Reason <select name="reason"><option value="">any</option>${reasons.map(
      (reason) => html`<option value="${reason}"${reason === query.reason ? html` selected` : ''}>${reason}</option>`,
    )}${query.reason !== undefined && !reasons.includes(query.reason) ? html`<option value="${query.reason}" selected>${query.reason}</option>` : ''}</select></label>
    <label>Per page <input name="limit" type="number" min="1" max="1000" value="${query.limit}"></label>
    <button type="submit">Filter</button>
    ${filtered ? html`<a href="/dead-letters">Clear</a>` : ''}
  </form>
  <div class="bulk">
    ${actionForm({ action: '/dead-letters/retry', label: `Retry all ${scope}${countText}`.replace(/\s+/g, ' '), csrfToken: context.csrfToken, filter, fields: bulkFields, style: 'primary', confirm: `Retry every dead letter ${filtered ? 'matching this filter' : 'in the queue'}?` })}
    ${actionForm({ action: '/dead-letters/purge', label: `Purge all ${scope}${countText}`.replace(/\s+/g, ' '), csrfToken: context.csrfToken, filter, fields: bulkFields, style: 'danger', confirm: `Delete every dead letter ${filtered ? 'matching this filter' : 'in the queue'}? This cannot be undone.` })}
  </div>
</div>
${
  entries.length === 0
    ? html`<div class="empty">${filtered ? 'No dead letters match this filter.' : 'No dead letters. Nothing failed for good.'}</div>`
    : html`<table class="entries stack">
  <thead><tr><th>ID</th><th>URL</th><th>Group</th><th>Reason</th><th>Status</th><th>Attempts</th><th>Failed at</th><th>Actions</th></tr></thead>
  <tbody>${entries.map((entry) => row(entry, context, query))}</tbody>
</table>`
}
<div class="pager">
  ${query.offset > 0 ? html`<a href="/dead-letters${listSearch({ ...query, offset: Math.max(0, query.offset - query.limit) })}">← Newer</a>` : ''}
  ${view.hasMore ? html`<a href="/dead-letters${listSearch({ ...query, offset: query.offset + query.limit })}">Older →</a>` : ''}
</div>
${pausedQueueNote()}`;
  return layout(context, { title: 'Dead letters', current: 'dead-letters', body });
}
