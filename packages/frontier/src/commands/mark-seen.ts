import { defineLuaScript } from '@crawlq/redis';
import { SEEN_CONFIG_ARGS, SEEN_SET_INCLUDE } from './seen-set-lua.js';
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
  includes: [SEEN_SET_INCLUDE],
  lua: `
local s, stored = seen_open()
if not s then return seen_mismatch(stored) end
local fps = {}
for i = ${SEEN_CONFIG_ARGS + 1}, #ARGV do fps[#fps + 1] = ARGV[i] end
local added = 0
for _, new in ipairs(seen_add_many(s, fps, '')) do
  if new then added = added + 1 end
end
seen_save(s)
return {${SeenScriptStatus.Ok}, added}
`,
});
