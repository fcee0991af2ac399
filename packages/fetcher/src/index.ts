export { createFetcher } from './create-fetcher.js';
export { warmUpFetcher } from './warm-up.js';
export type { RawExchange, RawHeader } from './raw-exchange.js';
export type { AttemptHooks, Fetcher, FetchRequest, FetchResult, RedirectInfo, RetryInfo, StreamedFetchResult, StreamRequest } from './fetcher-types.js';
export { DEFAULT_ACCEPT, DEFAULT_USER_AGENT, resolveFetcherOptions } from './fetcher-options.js';
export type {
  AddressPolicy,
  AgentOptions,
  ConnectionKey,
  FetcherOptions,
  HostResolver,
  ResolvedFetcherOptions,
  RetryOptions,
  TimeoutOptions,
} from './fetcher-options.js';
export { FetchError, PermanentFetchError, RetryableFetchError, noResponseFailure } from './errors.js';
export type { PermanentFetchErrorInit, PermanentFetchReason, RetryableFetchErrorInit, RetryableFetchReason } from './errors.js';
export { isRetryableStatus, parseRetryAfter } from './retry-policy.js';
