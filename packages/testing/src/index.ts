export { startTestRedis, type TestRedis } from './redis-server.js';
export { freePort } from './free-port.js';
export { mailHeader, mimePart } from './mail.js';
