import { QueryError } from './errors.js';
import { parseFilter, type EntryFilter } from './filters.js';

/** Which entries a bulk retry or purge touches: every one, or those matching a non-empty filter. */
export type Selection = { readonly all: true } | EntryFilter;

/**
 * The selection of a bulk action's form or JSON body: `all` (true, "true" or
 * "1"), or `group` and/or `reason`. Nothing at all is an error rather than
 * "all", so an empty request cannot retry or purge everything by accident.
 */
export function parseSelection(body: unknown): Selection {
  const source = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const filter = parseFilter(source);
  if (filter.group !== undefined || filter.reason !== undefined) return filter;
  if (source.all === true || source.all === 'true' || source.all === '1') return { all: true };
  throw new QueryError('all', 'give group, reason, or all: true');
}

export function isAll(selection: Selection): selection is { readonly all: true } {
  return 'all' in selection;
}
