import { defineLuaScript } from '@crawlq/redis';
import { ALERTS_LUA } from './files.js';

/** Where the pending digest stands after an event was added (ms from the Redis clock). */
export interface AccumulateReply {
  readonly seq: number;
  readonly lastDigestAt: number;
  readonly now: number;
}

/**
 * Adds one dead-letter event to the pending digest, atomically, and returns
 * what the caller needs to schedule the digest job.
 * Its KEYS, ARGV and reply: `lua/accumulate-alert-event.lua`.
 */
export const accumulateAlertEvent = defineLuaScript({
  name: 'accumulate-alert-event',
  keys: 3,
  file: ALERTS_LUA.file('lua/accumulate-alert-event.lua'),
  decode: (reply): AccumulateReply => {
    if (Array.isArray(reply) && reply.length === 3 && reply.every((part) => typeof part === 'string')) {
      const [seq, lastDigestAt, now] = reply.map(Number) as [number, number, number];
      return { seq, lastDigestAt, now };
    }
    throw new Error(`accumulate-alert-event: unexpected script reply ${JSON.stringify(reply)}`);
  },
});
