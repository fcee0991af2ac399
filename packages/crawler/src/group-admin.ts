import type { CrawlServices } from './crawl-services.js';
import { groupWaitsKey } from './group-waits.js';

const PAGE = 1_000;

/**
 * Lifts a group's pause for the whole fleet and wakes the group's jobs that
 * were deferred until the pause would have ended: without this they would sit
 * in the delayed set until then. Returns how many jobs were woken.
 */
export async function resumeGroup(services: CrawlServices, group: string): Promise<number> {
  await services.limiter.resume(group);
  // Its "waiting for" record ends with the pause (a robots.txt wait comes back with the next deferral).
  await services.redis.hdel(groupWaitsKey(services.config.namespace), group);
  let woken = 0;
  for (let start = 0; ; start += PAGE) {
    const jobs = await services.queue.getDelayed(start, start + PAGE - 1);
    if (jobs.length === 0) break;
    for (const job of jobs) {
      if (job.data.group !== group) continue;
      // Another worker may have promoted or taken it meanwhile; that is fine.
      await job.promote().then(
        () => (woken += 1),
        () => undefined,
      );
    }
    if (jobs.length < PAGE) break;
  }
  return woken;
}
