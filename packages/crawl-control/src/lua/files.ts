import { luaFiles, REDIS_LUA } from '@crawlq/redis';

/** This package's Lua: src/lua/ (dist/lua/ once built). */
export const CONTROL_LUA = luaFiles({ package: '@crawlq/crawl-control', root: new URL('..', import.meta.url), uses: [REDIS_LUA] });
