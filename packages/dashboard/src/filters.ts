import { QueryError } from './errors.js';

/** Which entries a page or API call is about: all given conditions hold. */
export interface EntryFilter {
  readonly group?: string;
  readonly reason?: string;
}

/** An `EntryFilter` plus paging. */
export interface ListQuery extends EntryFilter {
  readonly limit: number;
  readonly offset: number;
}

/** Entries per page when the query gives no `limit`. @default 100 */
export const DEFAULT_LIMIT = 100;
/** The largest `limit` a query may ask for. */
export const MAX_LIMIT = 1000;

/** One string parameter; empty counts as absent, repeated is an error (which one would win is a guess). */
function text(source: Record<string, unknown>, name: string): string | undefined {
  const value = source[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new QueryError(name, `${name}: give it at most once`);
  return value;
}

function whole(source: Record<string, unknown>, options: { name: string; min: number; max: number; fallback: number }): number {
  const raw = source[options.name];
  if (raw === undefined || raw === '') return options.fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < options.min || value > options.max) {
    throw new QueryError(options.name, `${options.name}: expected a whole number from ${options.min} to ${options.max}`);
  }
  return value;
}

/** The group and reason of a query string or form body. */
export function parseFilter(source: Record<string, unknown> | undefined): EntryFilter {
  const group = text(source ?? {}, 'group');
  const reason = text(source ?? {}, 'reason');
  return { ...(group === undefined ? {} : { group }), ...(reason === undefined ? {} : { reason }) };
}

/** `group`, `reason`, `limit` (1..1000, default 100) and `offset` of a query string. */
export function parseListQuery(source: Record<string, unknown>): ListQuery {
  return {
    ...parseFilter(source),
    limit: whole(source, { name: 'limit', min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT }),
    offset: whole(source, { name: 'offset', min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 }),
  };
}

/** A query string (with `?`, or empty) for a list page. */
export function listSearch(query: EntryFilter & { limit?: number; offset?: number }): string {
  const params = new URLSearchParams();
  if (query.group !== undefined) params.set('group', query.group);
  if (query.reason !== undefined) params.set('reason', query.reason);
  if (query.limit !== undefined && query.limit !== DEFAULT_LIMIT) params.set('limit', String(query.limit));
  if (query.offset !== undefined && query.offset > 0) params.set('offset', String(query.offset));
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}

const HOST_PORT = /^(\[[^\]]*\]|[^:]*):\d+$/;

function bare(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

/**
 * Whether a group filter picks `group`: the same name, or the filter names a
 * host without a port and `group` is that host on some port (`127.0.0.1`
 * picks `127.0.0.1:18503`), since groups of non-default ports carry them.
 */
export function groupMatches(filter: string, group: string): boolean {
  if (filter === group) return true;
  if (HOST_PORT.test(filter)) return false;
  const host = HOST_PORT.exec(group)?.[1] ?? group;
  return bare(host) === bare(filter);
}

/** Human-readable description of a filter, for messages. */
export function describeFilter(filter: EntryFilter): string {
  const parts = [filter.group === undefined ? '' : `group ${filter.group}`, filter.reason === undefined ? '' : `reason ${filter.reason}`];
  const described = parts.filter(Boolean).join(', ');
  return described === '' ? 'all' : described;
}
