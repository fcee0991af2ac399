import { html } from '../html.js';
import { layout, type PageContext } from './layout.js';

/** A page with a heading and one line of text (not found, bad request, server error). */
export function messagePage(context: PageContext, page: { title: string; text: string }): string {
  return layout(context, {
    title: page.title,
    current: 'none',
    body: html`<h1>${page.title}</h1><p>${page.text}</p><p><a href="/dead-letters">← Dead letters</a></p>`,
  });
}
