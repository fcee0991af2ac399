export { RedisDatabaseError, RedisNotInstalledError, RedisOutageError, RedisUnavailableError } from './errors.js';
export {
  connectRedis,
  openRedisFrom,
  clusterClientFor,
  redisOptionsFor,
  checkEvictionPolicy,
  type ConnectionRole,
  type ConnectOptions,
  type RedisConnectionInput,
} from './connection.js';
export { gateKeyPrefix, queuePrefix, stateKeyPrefix } from './namespace-keys.js';
export { REDIS_SERVER_SETTINGS, redisServerArgs } from './server-settings.js';
export { resolveRedis, type RedisHandle } from './embedded-server.js';
export { checkDatabase, databaseIndexOf } from './database-check.js';
export { watchRedisOutage, type RedisOutageWatch, type RedisOutageWatchOptions } from './outage-watch.js';
export {
  defineLuaScript,
  definedLuaScripts,
  luaInclude,
  LuaScript,
  CLOCK_INCLUDE,
  ARGS_INCLUDE,
  REDIS_LUA,
  type LuaInclude,
  type LuaScriptSpec,
  type DefinedLuaScript,
  type LuaReply,
  type LuaArg,
} from './lua-script.js';
export { luaFiles, LuaFiles, type LuaFile, type LuaFilesOptions } from './lua-files.js';
export { detectRedisCluster, isKnownCluster, openCluster, type RedisClient } from './cluster.js';
export { shardNamespaces, shardOfGroup, clusterSlot } from './shards.js';
