export { startTestRedis, type TestRedis, type TestRedisOptions } from './redis-server.js';
export { freePort, freePortPair } from './free-port.js';
export { mailHeader, mimePart } from './mail.js';
export { startTestPostgres, type TestPostgres } from './postgres-server.js';
export { checkWarcFile, type CheckedWarcRecord } from './warc-check.js';
export { startTestNginx, type NginxLogEntry, type TestNginx, type TestNginxOptions } from './nginx-server.js';
export { waitFor } from './wait-for.js';
export { startTestRedisCluster, type TestRedisCluster, type TestClusterNode, type TestRedisClusterOptions } from './redis-cluster.js';
export { readWarcWithAllReaders, resolveWarcPointer, type WarcPointer } from './warc-readers.js';
