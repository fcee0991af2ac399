import { PermanentFetchError, type Fetcher } from '@crawlq/fetcher';
import { stateKeyPrefix } from '@crawlq/queue';
import { createRobotsPolicy, type FetchRobots, type RobotsPolicy } from '@crawlq/robots';
import type { CrawlServices } from './crawl-services.js';
import { GroupGate } from './group-gate.js';
import { createGatedFetch, type GatedFetch } from './gated-fetch.js';

/** robots.txt fetches pass the group gate and count toward the group's rate. */
export function robotsFetchThrough(fetch: GatedFetch): FetchRobots {
  return async (robotsUrl, { signal }) => {
    try {
      const response = await fetch(robotsUrl, signal);
      return { status: response.status, body: response.body, finalUrl: response.finalUrl };
    } catch (error) {
      // The host itself is refused (SSRF policy): its pages will be refused
      // too, permanently and visibly; answer "no robots.txt" so they get
      // that verdict instead of waiting on an unreachable robots.txt.
      if (error instanceof PermanentFetchError) return { status: 404, body: new Uint8Array(), finalUrl: robotsUrl };
      throw error;
    }
  };
}

/** The crawl's robots.txt policy, shared by the fleet through Redis, fetching through the group gate. */
export function openRobotsPolicy(services: CrawlServices, fetcher: Fetcher): RobotsPolicy {
  const { config } = services;
  return createRobotsPolicy({
    redis: services.redis,
    prefix: `${stateKeyPrefix(config.namespace)}:robots`,
    userAgent: config.userAgent,
    ttlMs: config.robotsTtl,
    maxCrawlDelayMs: config.maxCrawlDelay,
    fetchRobots: robotsFetchThrough(createGatedFetch({ gate: new GroupGate(services.limiter), fetcher, groupOf: (url) => services.frontier.groupOf(url) })),
  });
}
