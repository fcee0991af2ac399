import { escapeHtml } from '@crawlq/urls';

/** Markup that is already safe: escaped, or written by us. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** What `html` accepts between its literal parts. Arrays are joined; null and undefined print nothing. */
export type HtmlValue = SafeHtml | string | number | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value));
}

/**
 * A template tag that escapes every interpolated value unless it is
 * `SafeHtml`, so hostile input (crawled URLs, error messages) cannot end up
 * as markup by forgetting a call. Write attribute values in double quotes.
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}
