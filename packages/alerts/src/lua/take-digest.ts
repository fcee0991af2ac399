import { defineLuaScript, type LuaReply } from '@crawlq/redis';
import { ALERTS_LUA } from './files.js';

/** What `takeDigest` answered (see the script's comment). */
export type TakeDigestReply =
  | { readonly outcome: 'taken'; readonly fields: readonly string[]; readonly examples: readonly string[] }
  | { readonly outcome: 'early'; readonly notBefore: number }
  | { readonly outcome: 'stale' }
  | { readonly outcome: 'empty' };

/**
 * Moves the pending events into the digest job's own keys (RENAME), once.
 * Re-running it for the same job (a retry, or a re-run after a crash before
 * the job stored the digest in its data) returns the same events again, so
 * nothing is lost and nothing is counted twice.
 * Its KEYS, ARGV and reply: `lua/take-digest.lua`.
 */
export const takeDigest = defineLuaScript({
  name: 'take-digest',
  keys: 6,
  file: ALERTS_LUA.file('lua/take-digest.lua'),
  decode: decodeTakeDigest,
});

function decodeTakeDigest(reply: LuaReply): TakeDigestReply {
  if (Array.isArray(reply)) {
    const [outcome, first, second] = reply;
    if (outcome === 'taken' && isStrings(first) && isStrings(second)) return { outcome, fields: first, examples: second };
    if (outcome === 'early' && typeof first === 'string') return { outcome, notBefore: Number(first) };
    if ((outcome === 'stale' || outcome === 'empty') && reply.length === 1) return { outcome };
  }
  throw new Error(`take-digest: unexpected script reply ${JSON.stringify(reply)}`);
}

function isStrings(value: LuaReply | undefined): value is string[] {
  return Array.isArray(value) && value.every((element) => typeof element === 'string');
}
