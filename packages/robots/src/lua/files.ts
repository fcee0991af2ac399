import { luaFiles } from '@crawlq/redis';

/** This package's Lua: src/lua/ (dist/lua/ once built). */
export const ROBOTS_LUA = luaFiles({ package: '@crawlq/robots', root: new URL('..', import.meta.url) });
