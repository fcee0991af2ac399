import { defineLuaScript } from '@crawlq/redis';
import { ALERTS_LUA } from './files.js';

/**
 * Moves the digest number past `ARGV[1]` if it is still that number (another
 * process may have moved it already). Returns the current number.
 * Its KEYS, ARGV and reply: `lua/bump-digest-seq.lua`.
 */
export const bumpDigestSeq = defineLuaScript({
  name: 'bump-digest-seq',
  keys: 1,
  file: ALERTS_LUA.file('lua/bump-digest-seq.lua'),
  decode: (reply): number => {
    if (typeof reply === 'string') return Number(reply);
    throw new Error(`bump-digest-seq: unexpected script reply ${JSON.stringify(reply)}`);
  },
});
