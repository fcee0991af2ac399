import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * A start the caller missed (its process woke past the late-start allowance):
 * when no start of the group was admitted after it, and the group is not
 * paused, it starts now instead, and the group's pacing moves back by the
 * lateness, so the next start is spaced from this one as from any other. A
 * later admission may already have been given the slot after it: then this
 * one is given back (a late start, as `abandon` counts it), and the caller
 * asks again. Refused whenever a crawl-wide cap is in force (its slots are
 * shared by every group). A grace (ARGV 6) moves the pacing back by that
 * much more: the caller may then go up to that late again (its reply crosses
 * the same busy event loop that made it late) without crowding the next
 * start, instead of giving the slot back and waiting a whole interval.
 * A start its server's level admitted too (ARGV 4) is held to the same rule
 * there: it must also be the server's latest admission (its pacing then
 * moves back as well, grace included), or still within the lateness the
 * server's window allows (ARGV 5), grace counted, else another group's start
 * reserved after it at the server would crowd that server's window.
 * Its KEYS, ARGV and reply: `lua/retake-start.lua`.
 */
export const retakeStartScript = defineLuaScript({
  name: 'retake-start',
  keys: 4,
  file: LIMITER_LUA.file('lua/retake-start.lua'),
});
