import { PermanentFetchError, RetryableFetchError, type Fetcher } from '@crawlq/fetcher';
import { stateKeyPrefix } from '@crawlq/redis';
import { createRobotsPolicy, RobotsFetchPostponedError, type FetchRobots, type RobotsPolicy } from '@crawlq/robots';
import { GroupPausedError } from '../errors.js';
import type { CrawlServices } from '@crawlq/crawl-control';
import { serverGateOptions } from './server-wiring.js';
import { GroupGate } from './group-gate.js';
import { createGatedFetch, type GatedFetch } from './one-off-fetch.js';

/** RFC 9309 2.3.1.2: follow at least five consecutive redirects for robots.txt (and no more here). */
export const ROBOTS_MAX_REDIRECTS = 5;

/**
 * robots.txt fetches pass the group gate and count toward the group's rate.
 * They read at most `maxBytes + 1` bytes (a longer file is cut, and its first
 * `maxBytes` still apply: RFC 9309 2.5), follow at most 5 redirects, and
 * answer 429/5xx as statuses, with their Retry-After, for the policy to
 * schedule the next try.
 */
export function robotsFetchThrough(fetch: GatedFetch, options: { postponeWhenPaused: boolean }): FetchRobots {
  return async (robotsUrl, { signal, maxBytes }) => {
    try {
      const response = await fetch(robotsUrl, {
        signal,
        maxRedirects: ROBOTS_MAX_REDIRECTS,
        bodyPrefixBytes: maxBytes + 1,
        postponeWhenPaused: options.postponeWhenPaused,
      });
      return { status: response.status, body: response.body, finalUrl: response.finalUrl, truncated: response.truncated === true };
    } catch (error) {
      if (error instanceof GroupPausedError) throw new RobotsFetchPostponedError(error.retryInMs, error.message);
      // The host itself is refused (SSRF policy): its pages will be refused
      // too, permanently and visibly; answer "no robots.txt" so they get
      // that verdict instead of waiting on an unreachable robots.txt. More
      // than 5 redirects: the RFC lets us take the file as unavailable.
      if (error instanceof PermanentFetchError) return { status: 404, body: new Uint8Array(), finalUrl: robotsUrl };
      if (error instanceof RetryableFetchError && error.status !== undefined) {
        return {
          status: error.status,
          body: new Uint8Array(),
          finalUrl: robotsUrl,
          ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
        };
      }
      throw error;
    }
  };
}

/**
 * The crawl's robots.txt policy, shared by the fleet through Redis, fetching
 * through the group gate. `postponeWhenPaused`: a paused group's robots.txt
 * is not waited for in-process; `check` rejects with `RobotsFetchPostponedError`
 * (the worker defers the job instead of holding it through the pause). `gate`:
 * the worker's own, so what robots.txt fetches do to a group's pace is reported like the pages'.
 * `signal`: the worker's stop; a robots.txt fetch in flight is cut by it, so
 * its job is given back like any interrupted job instead of holding the stop
 * up for the fetch's timeouts.
 */
export function openRobotsPolicy(
  services: CrawlServices,
  fetcher: Fetcher,
  options: { postponeWhenPaused?: boolean; gate?: GroupGate; signal?: AbortSignal } = {},
): RobotsPolicy {
  const { config } = services;
  return createRobotsPolicy({
    redis: services.redis,
    prefix: `${stateKeyPrefix(config.namespace)}:robots`,
    userAgent: config.userAgent,
    ttlMs: config.robotsTtl,
    maxCrawlDelayMs: config.maxCrawlDelay,
    retryBudgetMs: config.robotsRetryBudget,
    maxRetryAfterMs: config.maxPause,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    fetchRobots: robotsFetchThrough(createGatedFetch({ gate: options.gate ?? new GroupGate(services.limiter, serverGateOptions(services)), fetcher, groupOf: (url) => services.frontier.groupOf(url) }), {
      postponeWhenPaused: options.postponeWhenPaused === true,
    }),
  });
}
