import { CSRF_FIELD } from '../csrf-token.js';
import type { EntryFilter } from '../filters.js';
import { html, type SafeHtml } from '../html.js';

/** Bull Board badges the dead-letter queue "[Paused]"; say why where the dashboard links to it. */
export function pausedQueueNote(): SafeHtml {
  return html`<p class="muted note">In <a href="/queues">Bull Board</a> the dead-letter queue shows <b>[Paused]</b>: that is on purpose. Nothing consumes dead letters; they wait in the <a href="/dead-letters">Dead letters</a> view for review, retry or purge.</p>`;
}

/** `2026-12-02T10:11:19.239Z` as `2026-12-02 10:11:19Z`, in a `<time>` element. */
export function time(iso: string): SafeHtml {
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

/**
 * A crawled URL: a link only for http(s), so a `javascript:` URL stays text;
 * `noreferrer` so the dashboard's address does not leak to the site.
 */
export function urlLink(url: string): SafeHtml {
  let linkable = false;
  try {
    const { protocol } = new URL(url);
    linkable = protocol === 'http:' || protocol === 'https:';
  } catch {
    linkable = false;
  }
  return linkable ? html`<a href="${url}" rel="noreferrer noopener nofollow" target="_blank">${url}</a>` : html`<span>${url}</span>`;
}

/** Path of an entry's detail page or action. */
export function entryPath(id: string, action?: 'retry' | 'purge'): string {
  return `/dead-letters/${encodeURIComponent(id)}${action === undefined ? '' : `/${action}`}`;
}

/** A POST form with one button, carrying the CSRF token and the filter to return to. */
export function actionForm(options: {
  action: string;
  label: string;
  csrfToken: string;
  filter?: EntryFilter;
  fields?: Readonly<Record<string, string>>;
  confirm?: string;
  style?: 'primary' | 'danger';
  title?: string;
}): SafeHtml {
  const hidden: [string, string][] = [
    [CSRF_FIELD, options.csrfToken],
    ...(options.filter?.group === undefined ? [] : [['group', options.filter.group] as [string, string]]),
    ...(options.filter?.reason === undefined ? [] : [['reason', options.filter.reason] as [string, string]]),
    ...Object.entries(options.fields ?? {}),
  ];
  return html`<form class="inline" method="post" action="${options.action}"${options.confirm === undefined ? '' : html` data-confirm="${options.confirm}"`}>${hidden.map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<button type="submit"${options.style === undefined ? '' : html` class="${options.style}"`}${options.title === undefined ? '' : html` title="${options.title}"`}>${options.label}</button></form>`;
}
