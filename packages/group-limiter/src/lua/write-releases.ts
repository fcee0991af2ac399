import { defineLuaScript } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Writes what a process's releases of some groups left to write (their hold
 * times and requests sent, see `lua/fold-releases.lua`), for groups it has not
 * admitted a start of since. Its KEYS, ARGV and reply: `lua/write-releases.lua`.
 */
export const writeReleasesScript = defineLuaScript({
  name: 'write-releases',
  keys: 'variadic',
  file: LIMITER_LUA.file('lua/write-releases.lua'),
});
