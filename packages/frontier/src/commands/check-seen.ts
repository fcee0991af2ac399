import { defineLuaScript } from '@crawlq/redis';
import { SEEN_CONFIG_ARGS, SEEN_SET_INCLUDE } from './seen-set-lua.js';
import { SeenScriptStatus } from './seen-script-status.js';

/**
 * Read-only membership test.
 * KEYS: 1 seen-set meta
 * ARGV: the seen-set config (SEEN_CONFIG_ARGS), then fingerprints (16 bytes each)
 * Reply: {Ok, 1 (seen) or 0 per fingerprint} | {ModeMismatch, stored}
 */
export const checkSeenScript = defineLuaScript({
  name: 'seen-check',
  keys: 1,
  includes: [SEEN_SET_INCLUDE],
  lua: `
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local fps = {}
for i = ${SEEN_CONFIG_ARGS + 1}, #ARGV do fps[#fps + 1] = ARGV[i] end
local out = {${SeenScriptStatus.Ok}}
for _, seen in ipairs(seen_has_many(s, fps)) do
  out[#out + 1] = seen and 1 or 0
end
return out
`,
});
