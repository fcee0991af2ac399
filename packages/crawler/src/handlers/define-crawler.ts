import { CRAWLER_BRAND, type Crawler, type CrawlerDefinition } from './crawler-types.js';
import { CrawlerDefinitionError } from './user-errors.js';

/**
 * Defines a crawler: the default export of a module that `crawlq crawl
 * --crawler FILE` and `crawlq worker --crawler FILE` run on every worker.
 * Route labels are a typed union (an unknown label in `enqueue` fails tsc).
 * Called with the item type first, `defineCrawler<Product>()({...})`, a
 * `push` of anything else fails tsc too.
 */
export function defineCrawler<Item extends object>(): <const Label extends string>(definition: CrawlerDefinition<Label, Item>) => Crawler<Label, Item>;
export function defineCrawler<const Label extends string>(definition: CrawlerDefinition<Label>): Crawler<Label>;
export function defineCrawler(definition?: CrawlerDefinition): Crawler | ((definition: CrawlerDefinition) => Crawler) {
  if (definition === undefined) return (later: CrawlerDefinition) => brand(later);
  return brand(definition);
}

function brand<Label extends string, Item extends object>(definition: CrawlerDefinition<Label, Item>): Crawler<Label, Item> {
  checkDefinition(definition);
  return Object.freeze({ ...definition, [CRAWLER_BRAND]: true as const });
}

/** Throws a CrawlerDefinitionError naming what is wrong; plain JavaScript callers get no help from the types. */
export function checkDefinition(definition: unknown): asserts definition is CrawlerDefinition {
  if (typeof definition !== 'object' || definition === null) throw new CrawlerDefinitionError('expected an object with routes and defaultRoute');
  const { routes, defaultRoute, name } = definition as Partial<CrawlerDefinition>;
  if (typeof routes !== 'object' || routes === null || Object.keys(routes).length === 0) throw new CrawlerDefinitionError('routes: expected at least one route');
  for (const [label, handler] of Object.entries(routes)) {
    if (typeof handler !== 'function') throw new CrawlerDefinitionError(`routes.${label}: expected a function`);
  }
  if (typeof defaultRoute !== 'string' || !Object.hasOwn(routes, defaultRoute)) {
    throw new CrawlerDefinitionError(`defaultRoute: expected one of ${Object.keys(routes).join(', ')}, got ${JSON.stringify(defaultRoute)}`);
  }
  if (name !== undefined && (typeof name !== 'string' || !/^[\w.@/-]{1,100}$/.test(name))) {
    throw new CrawlerDefinitionError(`name: expected 1 to 100 letters, digits or . _ - @ /, got ${JSON.stringify(name)}`);
  }
  for (const hook of ['beforeRequest', 'afterResponse', 'onFailure'] as const) {
    const value = (definition as Record<string, unknown>)[hook];
    if (value !== undefined && typeof value !== 'function') throw new CrawlerDefinitionError(`${hook}: expected a function`);
  }
}

/** Whether a module's export is a crawler (made by any copy of `defineCrawler`). */
export function isCrawler(value: unknown): value is Crawler {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CRAWLER_BRAND] === true;
}
