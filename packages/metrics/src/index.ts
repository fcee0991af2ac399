export { CrawlMetrics, DENIAL_REASONS, PACE_CHANGE_REASONS, type PageObservation, type PaceChangeObservation, type CrawlCounters } from './crawl-metrics.js';
export { FleetStateReader, type FleetState, type QueueJobCounts, type GroupCounts } from './fleet-state.js';
export { registerFleetGauges } from './fleet-gauges.js';
export { startMetricsServer, createOpsHandler, OPS_PATHS, type MetricsServer, type MetricsServerOptions, type HealthReport } from './metrics-server.js';
export { openProbeConnection, watchRedisHealth, type RedisHealthWatch } from './redis-health.js';
export { startObservability, type Observability, type ObservabilityOptions } from './observability.js';
