import type { CrawlqConfig } from '@crawlq/config';
import type { FetcherOptions } from '@crawlq/fetcher';
import type { GateOptions } from './group-gate.js';
import { addressBookFor } from './address-book.js';
import type { CrawlServices } from '@crawlq/crawl-control';

/** Whether any server can meet a limit under `config` (off: the gate asks no address, at no cost). */
export function serverGateOn(config: CrawlqConfig): boolean {
  return config.serverRate !== null || config.serverConcurrency !== null || config.serverRules.some((rule) => rule.unlimited !== true && (rule.rate != null || rule.concurrency != null));
}

/** The gate's side of the server level: the agreed address of a request's host, read per request from the config in force. */
export function serverGateOptions(services: Pick<CrawlServices, 'redis' | 'config'>): Pick<GateOptions, 'addressOf'> {
  return {
    addressOf: (host) => (serverGateOn(services.config) ? addressBookFor(services.redis, services.config).addressOf(host) : Promise.resolve(undefined)),
  };
}

/** The fetcher's side: its sockets connect to the same agreed address (the SSRF guard checks it as before). */
export function serverFetcherOptions(services: Pick<CrawlServices, 'redis' | 'config'>): Pick<FetcherOptions, 'resolve' | 'connectionKey'> {
  return {
    resolve: (host) => addressBookFor(services.redis, services.config).resolve(host),
    // A host whose agreed address changed gets a new socket, not one to its old server.
    connectionKey: (host) => addressBookFor(services.redis, services.config).currentAddress(host),
  };
}
