import type { DeadLetterEntry } from '@crawlq/dead-letter';
import { html } from '../html.js';
import { actionForm, entryPath, time, urlLink } from './format.js';
import { layout, type PageContext } from './layout.js';

/** Everything kept about one entry, with its retry and purge buttons. */
export function deadLetterDetailPage(context: PageContext, entry: DeadLetterEntry): string {
  const body = html`<p><a href="/dead-letters">← All dead letters</a></p>
<h1>Dead letter <code>${entry.id}</code></h1>
<dl class="fields">
  <dt>URL</dt><dd>${urlLink(entry.url)}</dd>
  <dt>Group</dt><dd><a href="/dead-letters?group=${encodeURIComponent(entry.group)}">${entry.group}</a></dd>
  <dt>Depth</dt><dd>${entry.depth}</dd>
  <dt>Reason</dt><dd><span class="tag">${entry.reason}</span></dd>
  <dt>HTTP status</dt><dd>${entry.status ?? '–'}</dd>
  <dt>Error class</dt><dd><code>${entry.errorClass}</code></dd>
  <dt>Attempts</dt><dd>${entry.attempts} of ${entry.jobOptions.attempts}</dd>
  <dt>First failed at</dt><dd>${time(entry.firstFailedAt)}</dd>
  <dt>Last failed at</dt><dd>${time(entry.lastFailedAt)}</dd>
  <dt>Recorded by</dt><dd><code>${entry.workerId}</code></dd>
</dl>
<h2 class="spaced">Message</h2>
<pre>${entry.message}</pre>
<h2>Crawl job data</h2>
<pre>${JSON.stringify(entry.job, null, 2)}</pre>
<div class="actions-row">
  ${actionForm({ action: entryPath(entry.id, 'retry'), label: 'Retry', csrfToken: context.csrfToken, style: 'primary', title: `Retry ${entry.url}` })}
  ${actionForm({ action: entryPath(entry.id, 'purge'), label: 'Purge', csrfToken: context.csrfToken, style: 'danger', confirm: `Delete the dead letter for ${entry.url}?`, title: `Purge ${entry.url}` })}
</div>`;
  return layout(context, { title: `Dead letter ${entry.id}`, current: 'dead-letters', body });
}
