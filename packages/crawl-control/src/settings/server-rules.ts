import type { CrawlqConfig } from '@crawlq/config';
import type { ServerPolicyInput, ServerRule } from '@crawlq/group-limiter';
import cdnRanges from './cdn-ranges.json' with { type: 'json' };

/** How many times the per-group rate a server takes when `--server-rate auto`. */
export const AUTO_SERVER_RATE_FACTOR = 4;

interface CdnList {
  readonly providers: readonly { readonly name: string; readonly cidrs: readonly string[] }[];
}

/** The shipped CDN list (cdn-ranges.json, beside this file) as unlimited server rules. */
export function cdnServerRules(list: CdnList = cdnRanges): ServerRule[] {
  return list.providers.flatMap((provider) => provider.cidrs.map((cidr) => ({ cidr, unlimited: true, name: provider.name })));
}

/**
 * The server level a config describes: --server-rate (auto: 4 times --rate,
 * none with --rate none), --server-concurrency, the prefixes, the user's
 * serverRules first, then (with --cdn-ranges) the CDN list.
 */
export function serverPolicyFrom(config: CrawlqConfig): ServerPolicyInput {
  const rate = config.serverRate === 'auto' ? (config.rate === null ? null : { max: config.rate.max * AUTO_SERVER_RATE_FACTOR, durationMs: config.rate.durationMs }) : config.serverRate;
  const own: ServerRule[] = config.serverRules.map((rule) => ({
    cidr: rule.cidr,
    ...(rule.rate === undefined ? {} : { rate: rule.rate }),
    ...(rule.concurrency === undefined ? {} : { concurrency: rule.concurrency }),
    ...(rule.unlimited === undefined ? {} : { unlimited: rule.unlimited }),
    ...(rule.name === undefined ? {} : { name: rule.name }),
  }));
  return {
    defaults: { rate, concurrency: config.serverConcurrency },
    rules: config.cdnRanges ? [...own, ...cdnServerRules()] : own,
    prefixV4: config.serverPrefixV4,
    prefixV6: config.serverPrefixV6,
  };
}
