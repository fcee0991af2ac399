// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the typings of a BullMQ file that ships none, needed by every package that compiles this source
/// <reference path="./bullmq-scripts.d.ts" />
import { luaInclude, type LuaInclude } from '@crawlq/redis';
import { addPrioritizedJob } from 'bullmq/dist/cjs/scripts/addPrioritizedJob-9.js';
import { CRAWL_JOB_NAME } from './names.js';
import { crawlJobOptions, type CrawlJobPolicy, type CrawlQueue } from './queues.js';

/** KEYS of BullMQ's addPrioritizedJob script, in its order. */
const ADD_PRIORITIZED_KEYS = ['marker', 'meta', 'id', 'prioritized', 'delayed', 'completed', 'active', 'events', 'pc'] as const;

/**
 * Lua that writes one crawl job into BullMQ from inside another script, so a
 * URL can leave the frontier's backlog and become a job in one atomic step
 * (never both, never neither). It runs BullMQ's own addPrioritizedJob script
 * (the pinned version's source, as BullMQ ships it) as a function, with the
 * arguments `Queue.add` would pass for a prioritized job with a custom id:
 * the job hash, events, priority counter and worker marker are BullMQ's own
 * writes, not a copy of them. `test/write-job.test.ts` checks the result
 * against `Queue.add`, so a BullMQ upgrade that changes the contract fails there.
 *
 * Defines `write_crawl_job(queue_keys, job_prefix, id, data_json, opts_json,
 * priority, timestamp)`: queue_keys are the 9 keys of {@link crawlJobWriteKeys},
 * opts_json the job options without priority ({@link crawlJobOptionsJson}).
 * Returns the job id, or the existing job's id when one with that id exists
 * (BullMQ's duplicate handling: nothing is written then).
 */
export const WRITE_CRAWL_JOB_INCLUDE: LuaInclude = luaInclude(
  'write-crawl-job',
  `
local function bullmq_add_prioritized(KEYS, ARGV)
-- luacheck: push ignore
${addPrioritizedJob.content}
-- luacheck: pop
end
local function write_crawl_job(queue_keys, job_prefix, id, data_json, opts_json, priority, timestamp)
  local opts = cjson.decode(opts_json)
  opts.priority = priority
  opts.jobId = id
  local args = cmsgpack.pack({job_prefix, id, '${CRAWL_JOB_NAME}', timestamp})
  return bullmq_add_prioritized(queue_keys, {args, data_json, cmsgpack.pack(opts)})
end
`,
);

/** The crawl queue's keys `write_crawl_job` takes, then the prefix of its job hashes. */
export function crawlJobWriteKeys(queue: CrawlQueue): { readonly queueKeys: readonly string[]; readonly jobPrefix: string } {
  const keys = queue.keys as Record<string, string>;
  const queueKeys = ADD_PRIORITIZED_KEYS.map((name) => {
    const key = keys[name];
    if (key === undefined) throw new Error(`BullMQ queue key '${name}' not found: the pinned BullMQ version changed its key layout`);
    return key;
  });
  return { queueKeys, jobPrefix: queue.toKey('') };
}

/** A crawl job's options as `write_crawl_job` takes them (JSON; the priority is set per job). */
export function crawlJobOptionsJson(policy: CrawlJobPolicy): string {
  return JSON.stringify(crawlJobOptions(policy));
}
