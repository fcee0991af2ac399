import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * A start that went out later than its reserved slot allowed (the process
 * stalled after the gate let it go): pushes the group's pacing back by that
 * much, so the starts reserved from now on are spaced from when it really began.
 * The crawl-wide pacing, when there is one, moves back as well, and so does
 * the pacing of the server the start was admitted at (ARGV 2), whose next
 * starts may belong to other groups.
 * Its KEYS, ARGV and reply: `lua/slip.lua`.
 */
export const slipScript = defineLuaScript({
  name: 'slip',
  keys: 3,
  file: LIMITER_LUA.file('lua/slip.lua'),
});
