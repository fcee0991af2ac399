import { defineLuaScript } from '@crawlq/redis';
import { SEEN_LISTED_INCLUDE } from './seen-set-lua.js';
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
  includes: [SEEN_LISTED_INCLUDE],
  lua: `
local s, fps = seen_open_listed()
if not s then return fps end -- the mode-mismatch reply
local out = {${SeenScriptStatus.Ok}}
for _, seen in ipairs(seen_has_many(s, fps)) do
  out[#out + 1] = seen and 1 or 0
end
return out
`,
});
