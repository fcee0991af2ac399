import { PermanentFetchError } from '@crawlq/fetcher';
import type { FetchRobots } from '@crawlq/robots';
import type { GatedFetch } from './gated-fetch.js';

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
