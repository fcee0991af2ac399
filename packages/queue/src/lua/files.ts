// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the typings of a BullMQ file that ships none, needed by every package that compiles this source
/// <reference path="../bullmq-scripts.d.ts" />
import { luaFiles, REDIS_LUA } from '@crawlq/redis';
import { addPrioritizedJob } from 'bullmq/dist/cjs/scripts/addPrioritizedJob-9.js';

/**
 * BullMQ's own addPrioritizedJob script (the pinned version's source, as
 * BullMQ ships it) as a Lua function, `bullmq_add_prioritized(KEYS, ARGV)`:
 * the one file here made in TypeScript, as its text comes from BullMQ.
 * `lua/write-crawl-job.lua` includes it.
 */
const BULLMQ_ADD_PRIORITIZED = `local function bullmq_add_prioritized(KEYS, ARGV)
-- luacheck: push ignore
${addPrioritizedJob.content}
-- luacheck: pop
end
`;

/**
 * This package's Lua: src/lua/ (dist/lua/ once built). The frontier's
 * release step includes `write-crawl-job.lua` from here.
 */
export const QUEUE_LUA = luaFiles({
  package: '@crawlq/queue',
  root: new URL('..', import.meta.url),
  uses: [REDIS_LUA],
  made: { 'lua/bullmq-add-prioritized-job.lua': BULLMQ_ADD_PRIORITIZED },
});
