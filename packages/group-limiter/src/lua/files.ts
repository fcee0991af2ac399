import { luaFiles, REDIS_LUA } from '@crawlq/redis';

/**
 * This package's Lua: the limiter's scripts and includes in src/lua/ (dist/lua/
 * once built). The frontier's release step includes `paced-groups.lua` and
 * `policy-check.lua` from here.
 */
export const LIMITER_LUA = luaFiles({ package: '@crawlq/group-limiter', root: new URL('..', import.meta.url), uses: [REDIS_LUA] });
