export { QUEUE_NAMES, CRAWL_JOB_NAME, type QueueName } from './names.js';
export { crawlJobUnits, unitJobData, type CrawlJobData, type CrawlJobResult, type CrawlJobUnit } from './job-data.js';
export { crawlJobOptions, CRAWL_JOB_RETENTION, openQueue, openWorker, openCrawlQueue, crawlQueueKey, type OpenQueueOptions, type OpenWorkerOptions, type CrawlQueue, type CrawlJobPolicy, type CrawlCounts } from './queues.js';
export { crawlJobWriteKeys, crawlJobOptionsJson } from './write-job-lua.js';
export { QUEUE_LUA } from './lua/files.js';
export { holdJobLock, type JobLockHold, type LockedJob } from './lua/hold-job-lock.js';
export { JobSlots } from './job-slots.js';
