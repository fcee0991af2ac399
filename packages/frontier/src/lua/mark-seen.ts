import { defineLuaScript } from '@crawlq/redis';
import { SEEN_LISTED_INCLUDE } from './seen-set-lua.js';
import { SeenScriptStatus } from './seen-script-status.js';

/**
 * Marks fingerprints seen (those already present keep their value).
 * KEYS: 1 seen-set meta
 * ARGV: the seen-set config (SEEN_CONFIG_ARGS), then fingerprints (16 bytes each)
 * Reply: {Ok, how many were new} | {ModeMismatch, stored}
 */
export const markSeenScript = defineLuaScript({
  name: 'seen-mark',
  keys: 1,
  includes: [SEEN_LISTED_INCLUDE],
  lua: `
local s, fps = seen_open_listed()
if not s then return fps end -- the mode-mismatch reply
local added = 0
for _, new in ipairs(seen_add_many(s, fps, '')) do
  if new then added = added + 1 end
end
seen_save(s)
return {${SeenScriptStatus.Ok}, added}
`,
});
