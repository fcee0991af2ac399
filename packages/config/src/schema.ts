import { z } from 'zod';
import { parseBytes, parseDurationMs, parseRate } from './units.js';

// Values arrive as strings (flags, env) or as JSON values (config file); each
// field accepts both and normalises to one type.

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
    z.number({ error: 'expected a whole number' }).int('expected a whole number').min(min).max(max),
  );

const fraction = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
  z.number({ error: 'expected a number between 0 and 0.5' }).gt(0).lt(0.5),
);

const boolean = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(text)) return false;
  return value;
}, z.boolean({ error: 'expected true or false' }));

const duration = z.preprocess(
  (value) => (typeof value === 'string' || typeof value === 'number' ? (parseDurationMs(value) ?? value) : value),
  z.number({ error: 'expected a duration such as 500ms, 10s, 5m or 1h' }).int().min(0),
);

const bytes = z.preprocess(
  (value) => (typeof value === 'string' || typeof value === 'number' ? (parseBytes(value) ?? value) : value),
  z.number({ error: 'expected a size such as 512kb or 10mb' }).int().min(1),
);

const rateSchema = z.object({ max: z.number().int().min(1), durationMs: z.number().int().min(1) });
const rate = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  const parsed = parseRate(value);
  return parsed === undefined ? value : parsed;
}, rateSchema.nullable().refine((v) => v !== undefined, 'expected MAX/DURATION such as 5/1s, or none'));

const list = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '')
      : value,
  z.array(z.string()),
);

const redisUrl = z
  .string()
  .refine((value) => /^rediss?:\/\//.test(value) && URL.canParse(value), 'expected a redis:// or rediss:// URL');

const smtpUrl = z
  .string()
  .refine((value) => /^smtps?:\/\//.test(value) && URL.canParse(value), 'expected an smtp:// or smtps:// URL');

/** A per-group limit rule from the config file; first match wins. */
export const limitRuleSchema = z.strictObject({
  match: z.string().min(1),
  rate: rate.optional(),
  burst: integer(1, 10_000).optional(),
  concurrency: integer(1, 10_000).nullable().optional(),
});

/** A user-defined extraction field: CSS selector, text or an attribute, one or all matches. */
export const fieldRuleSchema = z.strictObject({
  name: z.string().min(1),
  selector: z.string().min(1),
  attribute: z.string().min(1).optional(),
  all: z.boolean().optional(),
});

/**
 * Every option crawlq reads, with its flag, its environment variable and its
 * default. Precedence: flags > environment > config file > defaults.
 */
export const OPTION_TABLE = {
  redisUrl: { flag: '--redis-url', env: 'REDIS_URL', schema: redisUrl.optional(), default: undefined, doc: 'Redis to use; unset: a private redis-server under --state-dir' },
  namespace: { flag: '--namespace', env: 'CRAWLQ_NAMESPACE', schema: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'letters, digits, - and _ only'), default: 'crawlq', doc: 'Key namespace: one crawl per namespace on a Redis' },
  stateDir: { flag: '--state-dir', env: 'CRAWLQ_STATE_DIR', schema: z.string().min(1), default: '.crawlq', doc: 'Local state: the embedded Redis data, the alert outbox' },
  scope: { flag: '--scope', env: 'CRAWLQ_SCOPE', schema: z.enum(['host', 'domain', 'any']), default: 'host', doc: "Which discovered links to follow: the seeds' hosts, their registrable domains, or any" },
  include: { flag: '--include', env: 'CRAWLQ_INCLUDE', schema: list, default: [], doc: 'Only follow URLs matching one of these globs or /regexes/ (repeatable)' },
  exclude: { flag: '--exclude', env: 'CRAWLQ_EXCLUDE', schema: list, default: [], doc: 'Never follow URLs matching these globs or /regexes/ (repeatable)' },
  maxDepth: { flag: '--max-depth', env: 'CRAWLQ_MAX_DEPTH', schema: integer(0, 10_000), default: 5, doc: 'Link distance from a seed beyond which links are not followed' },
  maxPages: { flag: '--max-pages', env: 'CRAWLQ_MAX_PAGES', schema: integer(1).optional(), default: undefined, doc: 'Stop admitting new URLs after this many (unset: no limit)' },
  maxPagesPerGroup: { flag: '--max-pages-per-group', env: 'CRAWLQ_MAX_PAGES_PER_GROUP', schema: integer(1).optional(), default: undefined, doc: 'Stop admitting new URLs of one group after this many' },
  attempts: { flag: '--attempts', env: 'CRAWLQ_ATTEMPTS', schema: integer(1, 100), default: 3, doc: 'Queue-level attempts per URL before it is dead-lettered' },
  backoff: { flag: '--backoff', env: 'CRAWLQ_BACKOFF', schema: duration, default: 5_000, doc: 'Base of the exponential backoff between queue-level attempts' },
  userAgent: { flag: '--user-agent', env: 'CRAWLQ_USER_AGENT', schema: z.string().min(1).max(512), default: 'crawlq/0.1 (+https://github.com/crawlq/crawlq)', doc: 'User-Agent header, also matched against robots.txt' },
  allowPrivateNetwork: { flag: '--allow-private-network', env: 'CRAWLQ_ALLOW_PRIVATE_NETWORK', schema: boolean, default: false, doc: 'Allow loopback, private and link-local targets (off: refused after DNS resolution and on redirects)' },
  sortQuery: { flag: '--sort-query', env: 'CRAWLQ_SORT_QUERY', schema: boolean, default: false, doc: 'Sort query parameters when normalising URLs' },
  workers: { flag: '--workers', env: 'CRAWLQ_WORKERS', schema: integer(1, 256), default: 1, doc: '`crawl`: worker processes to run' },
  concurrency: { flag: '--concurrency', env: 'CRAWLQ_CONCURRENCY', schema: integer(1, 10_000), default: 16, doc: 'Jobs in flight per worker process' },
  out: { flag: '--out', env: 'CRAWLQ_OUT', schema: z.string().min(1), default: './crawl-results.jsonl', doc: 'JSONL file the page records are appended to' },
  gracePeriod: { flag: '--grace-period', env: 'CRAWLQ_GRACE_PERIOD', schema: duration, default: 30_000, doc: 'On SIGTERM/SIGINT: how long in-flight jobs may finish' },
  groupBy: { flag: '--group-by', env: 'CRAWLQ_GROUP_BY', schema: z.enum(['host', 'domain']), default: 'host', doc: 'Politeness group of a URL: its host, or its registrable domain' },
  rate: { flag: '--rate', env: 'CRAWLQ_RATE', schema: rate, default: { max: 2, durationMs: 1_000 }, doc: 'Per-group request starts, MAX/DURATION (5/1s, 60/1m) or none; across all workers' },
  burst: { flag: '--burst', env: 'CRAWLQ_BURST', schema: integer(1, 10_000), default: 1, doc: 'Starts a group may make back to back (1: evenly spaced)' },
  domainConcurrency: { flag: '--domain-concurrency', env: 'CRAWLQ_DOMAIN_CONCURRENCY', schema: integer(1, 10_000), default: 2, doc: 'Per-group requests in flight, across all workers' },
  globalRate: { flag: '--global-rate', env: 'CRAWLQ_GLOBAL_RATE', schema: rate, default: null, doc: 'Whole-crawl job starts, MAX/DURATION (BullMQ queue limiter)' },
  groupRules: { flag: undefined, env: undefined, schema: z.array(z.strictObject({ match: z.string().min(1), group: z.string().regex(/^[A-Za-z0-9._:~-]{1,200}$/, 'letters, digits and . _ : ~ - only') })), default: [], doc: 'Config file only: custom groups, {match: host glob, group: name}, first match wins' },
  limitRules: { flag: undefined, env: undefined, schema: z.array(limitRuleSchema), default: [], doc: 'Config file only: per-group overrides by host glob, first match wins' },
  safetyMargin: { flag: '--safety-margin', env: 'CRAWLQ_SAFETY_MARGIN', schema: duration, default: 50, doc: 'Added to each rate window to absorb jitter between the gate and the server' },
  leaseTime: { flag: '--lease-time', env: 'CRAWLQ_LEASE_TIME', schema: duration, default: 60_000, doc: 'A concurrency slot held by a dead worker comes back after this' },
  stallTimeout: { flag: '--stall-timeout', env: 'CRAWLQ_STALL_TIMEOUT', schema: duration, default: 30_000, doc: "A job whose worker died is handed to another worker after this (BullMQ lock duration)" },
  maxBlocked: { flag: '--max-blocked', env: 'CRAWLQ_MAX_BLOCKED', schema: duration, default: 1_800_000, doc: 'A job whose group stays paused longer is dead-lettered' },
  maxPause: { flag: '--max-pause', env: 'CRAWLQ_MAX_PAUSE', schema: duration, default: 3_600_000, doc: 'Cap on a Retry-After or admin pause of a group' },
  requestTimeout: { flag: '--request-timeout', env: 'CRAWLQ_REQUEST_TIMEOUT', schema: duration, default: 30_000, doc: 'Whole-request timeout' },
  connectTimeout: { flag: '--connect-timeout', env: 'CRAWLQ_CONNECT_TIMEOUT', schema: duration, default: 10_000, doc: 'TCP/TLS connect timeout' },
  responseTimeout: { flag: '--response-timeout', env: 'CRAWLQ_RESPONSE_TIMEOUT', schema: duration, default: 15_000, doc: 'Time to the first response byte' },
  lookupTimeout: { flag: '--lookup-timeout', env: 'CRAWLQ_LOOKUP_TIMEOUT', schema: duration, default: 5_000, doc: 'DNS lookup timeout' },
  fetchRetries: { flag: '--fetch-retries', env: 'CRAWLQ_FETCH_RETRIES', schema: integer(0, 20), default: 2, doc: "got's own retries inside one attempt (timeouts, network errors, 408, 429, 5xx)" },
  fetchBackoff: { flag: '--fetch-backoff', env: 'CRAWLQ_FETCH_BACKOFF', schema: duration, default: 500, doc: "Base of got's exponential backoff with jitter" },
  maxBodySize: { flag: '--max-body-size', env: 'CRAWLQ_MAX_BODY_SIZE', schema: bytes, default: 10 * 1024 * 1024, doc: 'Largest body accepted, after decompression' },
  maxRedirects: { flag: '--max-redirects', env: 'CRAWLQ_MAX_REDIRECTS', schema: integer(0, 50), default: 10, doc: 'Redirect hops per chain, counted across the jobs a chain is handed to' },
  maxSockets: { flag: '--max-sockets', env: 'CRAWLQ_MAX_SOCKETS', schema: integer(1, 100_000), default: 256, doc: 'Keep-alive agent: sockets per origin' },
  maxFreeSockets: { flag: '--max-free-sockets', env: 'CRAWLQ_MAX_FREE_SOCKETS', schema: integer(0, 100_000), default: 32, doc: 'Keep-alive agent: idle sockets kept per origin' },
  freeSocketTimeout: { flag: '--free-socket-timeout', env: 'CRAWLQ_FREE_SOCKET_TIMEOUT', schema: duration, default: 15_000, doc: 'Keep-alive agent: idle socket lifetime' },
  robotsTtl: { flag: '--robots-ttl', env: 'CRAWLQ_ROBOTS_TTL', schema: duration, default: 86_400_000, doc: 'How long a fetched robots.txt is trusted, fleet-wide' },
  maxCrawlDelay: { flag: '--max-crawl-delay', env: 'CRAWLQ_MAX_CRAWL_DELAY', schema: duration, default: 30_000, doc: 'Cap on a robots.txt Crawl-delay (it only ever slows a group down)' },
  sitemaps: { flag: '--sitemaps', env: 'CRAWLQ_SITEMAPS', schema: boolean, default: false, doc: "Also enqueue the pages listed in the seeds' robots.txt Sitemap: lines" },
  seenSet: { flag: '--seen-set', env: 'CRAWLQ_SEEN_SET', schema: z.enum(['exact', 'bloom']), default: 'exact', doc: 'Dedupe with an exact set, or a Bloom filter of bounded memory (a false positive skips a URL)' },
  expectedUrls: { flag: '--expected-urls', env: 'CRAWLQ_EXPECTED_URLS', schema: integer(1_000, 10_000_000_000), default: 10_000_000, doc: 'Bloom mode: URLs the filter is sized for' },
  falsePositiveRate: { flag: '--false-positive-rate', env: 'CRAWLQ_FALSE_POSITIVE_RATE', schema: fraction, default: 0.001, doc: 'Bloom mode: share of new URLs wrongly taken as seen, at --expected-urls' },
  ignoreRobots: { flag: '--ignore-robots', env: 'CRAWLQ_IGNORE_ROBOTS', schema: boolean, default: false, doc: 'Do not fetch or obey robots.txt' },
  dlqMaxAge: { flag: '--dlq-max-age', env: 'CRAWLQ_DLQ_MAX_AGE', schema: duration.optional(), default: undefined, doc: 'Dead letters older than this are deleted by workers (unset: kept until reviewed)' },
  dlqMaxCount: { flag: '--dlq-max-count', env: 'CRAWLQ_DLQ_MAX_COUNT', schema: integer(1).optional(), default: undefined, doc: 'Only the newest this many dead letters are kept (unset: all)' },
  smtpUrl: { flag: '--smtp-url', env: 'SMTP_URL', schema: smtpUrl.optional(), default: undefined, doc: 'SMTP server for alerts (smtp:// or smtps://); unset: .eml files in the outbox' },
  smtpUser: { flag: undefined, env: 'SMTP_USER', schema: z.string().optional(), default: undefined, doc: 'SMTP user, if not in SMTP_URL' },
  smtpPassword: { flag: undefined, env: 'SMTP_PASSWORD', schema: z.string().optional(), default: undefined, doc: 'SMTP password, if not in SMTP_URL' },
  alertFrom: { flag: '--alert-from', env: 'ALERT_FROM', schema: z.string().min(3), default: 'crawlq <crawlq@localhost>', doc: 'From address of alert e-mails' },
  alertTo: { flag: '--alert-to', env: 'ALERT_TO', schema: list, default: [], doc: 'Alert recipients, comma-separated' },
  outboxDir: { flag: '--outbox-dir', env: 'CRAWLQ_OUTBOX_DIR', schema: z.string().min(1).optional(), default: undefined, doc: 'Where alerts go as .eml files without SMTP (default: <state-dir>/outbox)' },
  alertDelay: { flag: '--alert-delay', env: 'CRAWLQ_ALERT_DELAY', schema: duration, default: 30_000, doc: 'Delay before the first dead-letter alert goes out' },
  alertWindow: { flag: '--alert-window', env: 'CRAWLQ_ALERT_WINDOW', schema: duration, default: 900_000, doc: 'At most one alert e-mail per window, fleet-wide' },
  dashboardUrl: { flag: '--dashboard-url', env: 'CRAWLQ_DASHBOARD_URL', schema: z.string().url().optional(), default: undefined, doc: 'Public dashboard address, quoted in alert e-mails' },
  dashboardHost: { flag: '--host', env: 'CRAWLQ_DASHBOARD_HOST', schema: z.string().min(1), default: '127.0.0.1', doc: 'Dashboard bind address' },
  dashboardPort: { flag: '--port', env: 'CRAWLQ_DASHBOARD_PORT', schema: integer(0, 65_535), default: 3100, doc: 'Dashboard port' },
  dashboardUser: { flag: undefined, env: 'CRAWLQ_DASHBOARD_USER', schema: z.string().min(1).optional(), default: undefined, doc: 'Dashboard basic-auth user (required off loopback)' },
  dashboardPassword: { flag: undefined, env: 'CRAWLQ_DASHBOARD_PASSWORD', schema: z.string().min(1).optional(), default: undefined, doc: 'Dashboard basic-auth password' },
  logLevel: { flag: '--log-level', env: 'CRAWLQ_LOG_LEVEL', schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], { error: 'expected trace, debug, info, warn, error, fatal or silent' }), default: 'info', doc: 'Least severe log level written' },
  logFormat: { flag: '--log-format', env: 'CRAWLQ_LOG_FORMAT', schema: z.enum(['auto', 'json', 'pretty'], { error: 'expected json, pretty or auto' }), default: 'auto', doc: 'Log lines as JSON, short human lines, or auto: JSON unless stderr is a terminal' },
  statsInterval: { flag: '--stats-interval', env: 'CRAWLQ_STATS_INTERVAL', schema: duration, default: 60_000, doc: 'Workers log a stats line this often (0: never)' },
  metricsPort: { flag: '--metrics-port', env: 'CRAWLQ_METRICS_PORT', schema: integer(0, 65_535).optional(), default: undefined, doc: 'Serve /metrics, /healthz and /readyz on this port (unset: off; `crawl` workers use PORT+index)' },
  metricsHost: { flag: '--metrics-host', env: 'CRAWLQ_METRICS_HOST', schema: z.string().min(1), default: '127.0.0.1', doc: 'Bind address of the metrics endpoints' },
  fields: { flag: undefined, env: undefined, schema: z.array(fieldRuleSchema), default: [], doc: 'Config file only: extra fields to extract with CSS selectors' },
} as const;

export type OptionName = keyof typeof OPTION_TABLE;

type OptionTable = typeof OPTION_TABLE;
/** The parsed, validated configuration. */
export type CrawlqConfig = {
  readonly [K in OptionName]: z.output<OptionTable[K]['schema']>;
} & {
  /** Options set by a flag, the environment or the config file rather than left at their default. */
  readonly explicit: readonly OptionName[];
};
