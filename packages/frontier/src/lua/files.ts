import { LIMITER_LUA } from '@crawlq/group-limiter';
import { QUEUE_LUA } from '@crawlq/queue';
import { luaFiles, REDIS_LUA } from '@crawlq/redis';

/**
 * This package's Lua: src/lua/ (dist/lua/ once built). The release step
 * includes the limiter's pacing layout and the queue's job writer.
 */
export const FRONTIER_LUA = luaFiles({ package: '@crawlq/frontier', root: new URL('..', import.meta.url), uses: [REDIS_LUA, LIMITER_LUA, QUEUE_LUA] });
