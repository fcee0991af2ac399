import { GROUP_NAME_PATTERN } from '@crawlq/urls';
// A namespace import, not `{ z }`: esbuild can then leave out of the bundled worker what the
// schemas never use, such as every locale but English (about 600 KB).
import * as z from 'zod';
import { isPostgresUrl } from './database-url.js';
import { parseBytes, parseDurationMs, parseRate } from './units.js';

// Values arrive as strings (flags, env) or as JSON values (config file); each
// field accepts both and normalises to one type.

// Every schema words its own errors by what the option expects: a user must
// never read a validator's internal text ("Invalid input: expected object").

/** The one message for any bad value of a whole-number option: what it must be, range included. */
function integerMessage(min: number, max: number): string {
  return max >= Number.MAX_SAFE_INTEGER ? `expected a whole number of ${min} or more` : `expected a whole number from ${min} to ${max}`;
}

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
    z.number({ error: integerMessage(min, max) }).int().min(min).max(max),
  );

/** One of a few words: the error lists them. */
function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const words = values.length === 1 ? values[0] : `${values.slice(0, -1).join(', ')} or ${values.at(-1) ?? ''}`;
  return z.enum(values, { error: `expected ${words}` });
}

/** Free text, at least one character (at most `max`). */
function text(max = Number.MAX_SAFE_INTEGER) {
  const message = max >= Number.MAX_SAFE_INTEGER ? 'expected a non-empty value' : `expected a non-empty value of at most ${max} characters`;
  return z.string({ error: message }).min(1).max(max);
}

const fraction = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
  z.number({ error: 'expected a number between 0 and 0.5' }).gt(0).lt(0.5),
);

const ratio = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
  z.number({ error: 'expected a number between 0 and 1' }).min(0).max(1),
);

/** A share of a group's limits: adaptive pacing's floor. Below 0.001 a 1/s group would wait 17 minutes between requests. */
const share = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
  z.number({ error: 'expected a number from 0.001 to 1' }).min(0.001).max(1),
);

const boolean = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(text)) return false;
  return value;
}, z.boolean({ error: 'expected true or false' }));

/** Every duration schema, so `optionValueKind` knows one however it is bounded. */
const DURATION_SCHEMAS = new WeakSet<z.ZodType>();

/**
 * A duration in ms, at least `minMs`. `-5s` parses to -5000 so a negative is
 * refused by the bound (with its own message) rather than as gibberish.
 */
function durationAtLeast(minMs: number, tooSmall: string): z.ZodType<number, unknown> {
  const schema = z.preprocess(
    (value) => {
      if (typeof value === 'number') return parseDurationMs(value) ?? value;
      if (typeof value !== 'string') return value;
      const text = value.trim();
      const negated = text.startsWith('-') ? parseDurationMs(text.slice(1)) : undefined;
      return negated === undefined ? (parseDurationMs(text) ?? value) : -negated;
    },
    z.number({ error: 'expected a duration such as 500ms, 10s, 5m or 1h' }).int().min(minMs, tooSmall),
  );
  DURATION_SCHEMAS.add(schema);
  return schema;
}

/** A duration where 0 means something (no wait, no margin, never); each such option's doc says what. */
const duration = durationAtLeast(0, 'expected a duration of 0 or more, such as 0, 500ms or 10s');

/**
 * A timeout, lifetime or cap that makes no sense at 0: a 0 ms request timeout
 * or lock duration made every worker crash and respawn until none was left.
 */
const positiveDuration = durationAtLeast(1, 'expected a duration greater than 0, such as 500ms, 10s or 5m');

const bytes = z.preprocess(
  (value) => (typeof value === 'string' || typeof value === 'number' ? (parseBytes(value) ?? value) : value),
  z.number({ error: 'expected a size such as 512kb or 10mb' }).int().min(1),
);

const RATE_MESSAGE = 'expected MAX/DURATION such as 5/1s, or none';
const rateNumber = z.number({ error: RATE_MESSAGE }).int().min(1);
const rateSchema = z.object({ max: rateNumber, durationMs: rateNumber }, { error: RATE_MESSAGE });
const rate = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  const parsed = parseRate(value);
  return parsed === undefined ? value : parsed;
}, rateSchema.nullable());

/** A server rate: `auto` (derived from --rate, see limitPolicyFrom), MAX/DURATION, or none. */
const serverRate = z.preprocess((value) => {
  if (typeof value !== 'string' || value.trim().toLowerCase() === 'auto') return typeof value === 'string' ? 'auto' : value;
  const parsed = parseRate(value);
  return parsed === undefined ? value : parsed;
}, z.union([z.literal('auto'), rateSchema.nullable()], { error: 'expected auto, MAX/DURATION such as 10/1s, or none' }));

/** A count or none (no cap). */
const countOrNone = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  if (value.trim().toLowerCase() === 'none') return null;
  return /^\s*\d+\s*$/.test(value) ? Number(value) : value;
}, z.number({ error: 'expected a whole number of 1 or more, or none' }).int().min(1).max(1_000_000).nullable());

/** A server rule from the config file (or the shipped CDN list): an address range with its own server limits, or none. */
export const serverRuleSchema = z.strictObject({
  cidr: z.string().min(1),
  rate: rate.optional(),
  concurrency: integer(1, 1_000_000).nullable().optional(),
  unlimited: z.boolean().optional(),
  name: z.string().min(1).max(100).optional(),
});

const list = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '')
      : value,
  z.array(z.string({ error: 'expected a comma-separated list of words' }), { error: 'expected a comma-separated list of words' }),
);

/** Every schema of a value that can carry credentials (a URL with a password), so `optionValueKind` knows one. */
const URL_SCHEMAS = new WeakSet<z.ZodType>();
function urlSchema<T extends z.ZodType>(schema: T): T {
  URL_SCHEMAS.add(schema);
  return schema;
}

const redisUrl = urlSchema(z
  .string({ error: 'expected a redis:// or rediss:// URL' })
  .refine((value) => /^rediss?:\/\//.test(value) && URL.canParse(value), 'expected a redis:// or rediss:// URL')
  // ioredis would read `/db2` as no database and use 0 without a word.
  .refine((value) => !URL.canParse(value) || /^\/?(\d+)?$/.test(new URL(value).pathname), 'expected a database number as the path, such as redis://host:6379/2'));

// host:port of a Redis Cluster node: a name, an IPv4 address or an [IPv6] literal.
const SEEDS_EXPECTED = 'expected host:port of a cluster node, comma-separated (such as 10.0.0.2:6379,[::1]:7000)';
const redisSeeds = z.preprocess(
  (value) => (typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter((item) => item !== '') : value),
  z.array(
    z
      .string({ error: SEEDS_EXPECTED })
      .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([1-9]\d{0,4})$/, SEEDS_EXPECTED)
      .refine((value) => Number(value.slice(value.lastIndexOf(':') + 1)) <= 65_535, SEEDS_EXPECTED),
    { error: SEEDS_EXPECTED },
  ),
);

// Never echoed back in an error: the value can hold a password.
const postgresUrl = urlSchema(z
  .string({ error: 'expected a postgres:// or postgresql:// URL' })
  .refine((value) => isPostgresUrl(value) && URL.canParse(value), 'expected a postgres:// or postgresql:// URL'));

const smtpUrl = urlSchema(z
  .string({ error: 'expected an smtp:// or smtps:// URL' })
  .refine((value) => /^smtps?:\/\//.test(value) && URL.canParse(value), 'expected an smtp:// or smtps:// URL'));

const httpUrl = urlSchema(z.string({ error: 'expected an http:// or https:// URL' }).url());

/** A results file, or a postgres:// URL, which can carry a password. */
const outTarget = urlSchema(
  z.string({ error: 'expected a file path or a postgres:// URL' }).min(1).refine((value) => !/^postgres(ql)?:/i.test(value) || (isPostgresUrl(value) && URL.canParse(value)), 'expected a file path or a postgres:// URL'),
);

const REVISIT_MESSAGE = 'expected off, adaptive, or a fixed interval such as 30s, 1h or 1d';
/**
 * A revisit policy: `off` (a one-shot crawl), `adaptive` (each URL's interval
 * follows how often it changes), or a fixed interval in ms.
 */
const revisit = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    const text = value.trim().toLowerCase();
    if (text === 'off' || text === 'adaptive') return text;
    return parseDurationMs(text) ?? value;
  },
  z.union([z.literal('off'), z.literal('adaptive'), z.number({ error: REVISIT_MESSAGE }).int(REVISIT_MESSAGE).min(1_000, REVISIT_MESSAGE)], { error: REVISIT_MESSAGE }),
);

/** A per-group limit rule from the config file; first match wins. */
export const limitRuleSchema = z.strictObject({
  match: z.string().min(1),
  rate: rate.optional(),
  burst: integer(1, 10_000).optional(),
  concurrency: integer(1, 10_000).nullable().optional(),
  /** Adaptive pacing for the matching groups, whatever --adaptive says. */
  adaptive: boolean.optional(),
  /** Rendering for the matching groups, whatever --render says. */
  render: oneOf(['never', 'always', 'auto'] as const).optional(),
  /** A rendered page is ready once this CSS selector is in the DOM (instead of network idle). */
  waitFor: text(1_000).optional(),
  /** Scroll to the bottom up to this many times, letting the page settle after each (infinite scroll). */
  scrollSteps: integer(0, 100).optional(),
  /** Click this selector ("load more") while it is visible, up to clickSteps times. */
  clickSelector: text(1_000).optional(),
  clickSteps: integer(0, 100).optional(),
  /** The revisit policy of the matching groups, whatever --revisit says (on only when --revisit is not off). */
  revisit: revisit.optional(),
  revisitMin: durationAtLeast(1_000, 'expected at least 1s').optional(),
  revisitMax: durationAtLeast(1_000, 'expected at least 1s').optional(),
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
 *
 * `scope` says who owns the value: `fleet` options shape what is
 * fetched and how politely, so they live in the namespace's crawl definition
 * in Redis and every process follows it; `process` options (connections,
 * concurrency, output, ports, alert delivery) stay each process's own.
 */
export const OPTION_TABLE = {
  redisUrl: { scope: 'process', flag: '--redis-url', env: 'REDIS_URL', schema: redisUrl.optional(), default: undefined, doc: 'Redis to use; unset: a private redis-server under --state-dir' },
  redisSeeds: { scope: 'process', flag: '--redis-seeds', env: 'REDIS_SEEDS', schema: redisSeeds.optional(), default: undefined, doc: "More nodes (host:port, comma-separated) of the Redis Cluster --redis-url names: tried in turn when that node does not answer, and seeds of every cluster connection (the URL's credentials and TLS apply)" },
  namespace: { scope: 'process', flag: '--namespace', env: 'CRAWLQ_NAMESPACE', schema: z.string({ error: 'expected 1 to 64 letters, digits, - and _' }).regex(/^[a-zA-Z0-9_-]{1,64}$/, 'expected 1 to 64 letters, digits, - and _'), default: 'crawlq', doc: 'Key namespace: one crawl per namespace on a Redis' },
  stateDir: { scope: 'process', flag: '--state-dir', env: 'CRAWLQ_STATE_DIR', schema: text(), default: '.crawlq', doc: 'Local state: the embedded Redis data, the alert outbox' },
  scope: { scope: 'fleet', flag: '--scope', env: 'CRAWLQ_SCOPE', schema: oneOf(['host', 'domain', 'any'] as const), default: 'host', doc: "Which discovered links to follow: the seeds' hosts, their registrable domains, or any" },
  include: { scope: 'fleet', flag: '--include', env: 'CRAWLQ_INCLUDE', schema: list, default: [], doc: 'Only follow URLs matching one of these globs or /regexes/ (repeatable)' },
  exclude: { scope: 'fleet', flag: '--exclude', env: 'CRAWLQ_EXCLUDE', schema: list, default: [], doc: 'Never follow URLs matching these globs or /regexes/ (repeatable)' },
  maxDepth: { scope: 'fleet', flag: '--max-depth', env: 'CRAWLQ_MAX_DEPTH', schema: integer(0, 10_000), default: 5, doc: 'Link distance from a seed beyond which links are not followed' },
  maxPages: { scope: 'fleet', flag: '--max-pages', env: 'CRAWLQ_MAX_PAGES', schema: integer(1).optional(), default: undefined, doc: 'Stop admitting new URLs after this many (unset: no limit)' },
  maxPagesPerGroup: { scope: 'fleet', flag: '--max-pages-per-group', env: 'CRAWLQ_MAX_PAGES_PER_GROUP', schema: integer(1).optional(), default: undefined, doc: 'Stop admitting new URLs of one group after this many' },
  attempts: { scope: 'fleet', flag: '--attempts', env: 'CRAWLQ_ATTEMPTS', schema: integer(1, 100), default: 3, doc: 'Queue-level attempts per URL before it is dead-lettered' },
  backoff: { scope: 'fleet', flag: '--backoff', env: 'CRAWLQ_BACKOFF', schema: duration, default: 5_000, doc: 'Base of the exponential backoff between queue-level attempts (0: retry at once)' },
  userAgent: { scope: 'fleet', flag: '--user-agent', env: 'CRAWLQ_USER_AGENT', schema: text(512), default: 'crawlq/0.1 (+https://github.com/crawlq/crawlq)', doc: 'User-Agent header, also matched against robots.txt' },
  allowPrivateNetwork: { scope: 'fleet', flag: '--allow-private-network', env: 'CRAWLQ_ALLOW_PRIVATE_NETWORK', schema: boolean, default: false, doc: 'Allow loopback, private and link-local targets (off: refused after DNS resolution and on redirects)' },
  sortQuery: { scope: 'fleet', flag: '--sort-query', env: 'CRAWLQ_SORT_QUERY', schema: boolean, default: false, doc: 'Sort query parameters when normalising URLs' },
  workers: { scope: 'process', flag: '--workers', env: 'CRAWLQ_WORKERS', schema: integer(1, 256), default: 1, doc: '`crawl`: worker processes to run' },
  concurrency: { scope: 'process', flag: '--concurrency', env: 'CRAWLQ_CONCURRENCY', schema: integer(1, 10_000), default: 16, doc: 'Requests under way per worker process (a job asleep until its next start holds none)' },
  out: {
    scope: 'process', flag: '--out', env: 'CRAWLQ_OUT',
    schema: outTarget,
    default: './crawl-results.jsonl', doc: 'Where page records go: a JSONL file, or a postgres:// URL (the PostgreSQL sink)',
  },
  sink: { scope: 'process', flag: '--sink', env: 'CRAWLQ_SINK', schema: oneOf(['jsonl', 'postgres'] as const).optional(), default: undefined, doc: 'Results sink: jsonl (the --out file) or postgres (--database-url); default: postgres when a database URL is given' },
  databaseUrl: { scope: 'process', flag: '--database-url', env: 'CRAWLQ_DATABASE_URL', schema: postgresUrl.optional(), default: undefined, doc: 'PostgreSQL for the results sink and `results export/stats` (postgres://user:pass@host/db)' },
  sinkBatchSize: { scope: 'process', flag: '--sink-batch-size', env: 'CRAWLQ_SINK_BATCH_SIZE', schema: integer(1, 10_000), default: 200, doc: 'PostgreSQL sink: most rows per INSERT' },
  storeBody: { scope: 'process', flag: '--store-body', env: 'CRAWLQ_STORE_BODY', schema: boolean, default: false, doc: 'Keep the decoded HTML of each page in the results (field body)' },
  crawler: { scope: 'process', flag: '--crawler', env: 'CRAWLQ_CRAWLER', schema: text().optional(), default: undefined, doc: 'A module (TypeScript or JavaScript) whose default export is a defineCrawler() crawler: its routes handle the pages instead of the built-in page record; every worker of a fleet must run the same one' },
  warc: { scope: 'process', flag: '--warc', env: 'CRAWLQ_WARC', schema: text().optional(), default: undefined, doc: 'Directory for WARC 1.1 archives of every fetched page (request and response records)' },
  warcMaxSize: { scope: 'process', flag: '--warc-max-size', env: 'CRAWLQ_WARC_MAX_SIZE', schema: bytes, default: 1_000_000_000, doc: 'A WARC file is closed and the next one started at this size' },
  gracePeriod: { scope: 'process', flag: '--grace-period', env: 'CRAWLQ_GRACE_PERIOD', schema: duration, default: 30_000, doc: 'On SIGTERM/SIGINT/SIGHUP: how long in-flight jobs may finish (0: stop at once; unfinished jobs are picked up again after --stall-timeout); the stop does not wait for a Redis that does not answer' },
  redisOutageLimit: { scope: 'process', flag: '--redis-outage-limit', env: 'CRAWLQ_REDIS_OUTAGE_LIMIT', schema: positiveDuration, default: 300_000, doc: '`crawl` and `worker` stop (exit code 3) when Redis stays unreachable longer than this; shorter outages are ridden through' },
  groupBy: { scope: 'fleet', flag: '--group-by', env: 'CRAWLQ_GROUP_BY', schema: oneOf(['host', 'domain'] as const), default: 'host', doc: 'Politeness group of a URL: its host, or its registrable domain' },
  rate: { scope: 'fleet', flag: '--rate', env: 'CRAWLQ_RATE', schema: rate, default: { max: 2, durationMs: 1_000 }, doc: 'Per-group request starts, MAX/DURATION (5/1s, 60/1m) or none; across all workers' },
  burst: { scope: 'fleet', flag: '--burst', env: 'CRAWLQ_BURST', schema: integer(1, 10_000), default: 1, doc: 'Starts a group may make back to back (1: evenly spaced)' },
  domainConcurrency: { scope: 'fleet', flag: '--domain-concurrency', env: 'CRAWLQ_DOMAIN_CONCURRENCY', schema: integer(1, 10_000), default: 2, doc: 'Per-group requests in flight, across all workers' },
  globalRate: { scope: 'fleet', flag: '--global-rate', env: 'CRAWLQ_GLOBAL_RATE', schema: rate, default: null, doc: 'Request starts of the whole crawl, all groups and workers together, MAX/DURATION or none (enforced by the group gate; with --shards S each shard paces a whole share of it, so MAX >= S)' },
  serverRate: { scope: 'fleet', flag: '--server-rate', env: 'CRAWLQ_SERVER_RATE', schema: serverRate, default: 'auto', doc: 'Request starts per server (the address a connection goes to: IPv4 address, IPv6 /64), over every group behind it and across all workers, MAX/DURATION or none; auto: 4 times --rate, which a one-host crawl never reaches' },
  serverConcurrency: { scope: 'fleet', flag: '--server-concurrency', env: 'CRAWLQ_SERVER_CONCURRENCY', schema: countOrNone, default: null, doc: 'Requests in flight per server, over every group behind it and across all workers, or none' },
  serverPrefixV4: { scope: 'fleet', flag: '--server-prefix-v4', env: 'CRAWLQ_SERVER_PREFIX_V4', schema: integer(8, 32), default: 32, doc: 'Leading bits of an IPv4 address that name its server (32: each address is a server)' },
  serverPrefixV6: { scope: 'fleet', flag: '--server-prefix-v6', env: 'CRAWLQ_SERVER_PREFIX_V6', schema: integer(8, 128), default: 64, doc: 'Leading bits of an IPv6 address that name its server (64: one machine usually holds a whole /64)' },
  serverRules: { scope: 'fleet', flag: undefined, env: undefined, schema: z.array(serverRuleSchema), default: [], doc: 'Config file only: per-server limits by address range, {cidr, rate?, concurrency?, unlimited?, name?}, first match wins, before the CDN list' },
  cdnRanges: { scope: 'fleet', flag: '--cdn-ranges', env: 'CRAWLQ_CDN_RANGES', schema: boolean, default: true, doc: "Treat the major CDNs' published address ranges (a data file shipped with crawlq) as unlimited servers: an edge serving thousands of sites is not one machine" },
  dnsServers: { scope: 'fleet', flag: '--dns-servers', env: 'CRAWLQ_DNS_SERVERS', schema: list, default: [], doc: 'DNS servers (host or host:port, comma-separated) to resolve with; unset: the system resolver' },
  dnsTtlMin: { scope: 'fleet', flag: '--dns-ttl-min', env: 'CRAWLQ_DNS_TTL_MIN', schema: positiveDuration, default: 60_000, doc: "Shortest time a host's address is kept (fleet-wide, in Redis): its server, as every worker sees it, changes no more often" },
  dnsTtlMax: { scope: 'fleet', flag: '--dns-ttl-max', env: 'CRAWLQ_DNS_TTL_MAX', schema: positiveDuration, default: 900_000, doc: "Longest time a host's address is kept, whatever its DNS record's TTL says" },
  groupRules: { scope: 'fleet', flag: undefined, env: undefined, schema: z.array(z.strictObject({ match: z.string().min(1), group: z.string().regex(GROUP_NAME_PATTERN, 'letters, digits and . _ : ~ - only') })), default: [], doc: 'Config file only: custom groups, {match: host glob, group: name}, first match wins' },
  limitRules: { scope: 'fleet', flag: undefined, env: undefined, schema: z.array(limitRuleSchema), default: [], doc: 'Config file only: per-group overrides by host glob, first match wins' },
  adaptive: { scope: 'fleet', flag: '--adaptive', env: 'CRAWLQ_ADAPTIVE', schema: boolean, default: false, doc: "Adapt each group's pace between --adaptive-floor and its limits to the latency and errors all workers see: cut on congestion, regained step by step (limitRules may set adaptive per group)" },
  adaptiveFloor: { scope: 'fleet', flag: '--adaptive-floor', env: 'CRAWLQ_ADAPTIVE_FLOOR', schema: share, default: 0.1, doc: '--adaptive: the slowest a group may go, as a share of its rate, concurrency and Crawl-delay pace' },
  adaptiveRecovery: { scope: 'fleet', flag: '--adaptive-recovery', env: 'CRAWLQ_ADAPTIVE_RECOVERY', schema: durationAtLeast(1_000, 'expected at least 1s'), default: 50_000, doc: '--adaptive: how long a group cut to half pace takes to climb back to full pace while no new signal comes (the additive increase)' },
  safetyMargin: { scope: 'fleet', flag: '--safety-margin', env: 'CRAWLQ_SAFETY_MARGIN', schema: duration, default: 50, doc: 'Added to each rate window to absorb jitter between the gate and the server (0: none)' },
  spacingMargin: { scope: 'fleet', flag: '--spacing-margin', env: 'CRAWLQ_SPACING_MARGIN', schema: ratio, default: 0.05, doc: 'Share of a rate\'s spacing (DURATION/MAX) added to it, so a server with a zero-burst leaky bucket (nginx limit_req) never sees two starts too close' },
  leaseTime: { scope: 'fleet', flag: '--lease-time', env: 'CRAWLQ_LEASE_TIME', schema: positiveDuration, default: 60_000, doc: 'A concurrency slot held by a dead worker comes back after this; at least --request-timeout' },
  stallTimeout: { scope: 'process', flag: '--stall-timeout', env: 'CRAWLQ_STALL_TIMEOUT', schema: positiveDuration, default: 30_000, doc: "A job whose worker died is handed to another worker after this (BullMQ lock duration)" },
  maxBlocked: { scope: 'fleet', flag: '--max-blocked', env: 'CRAWLQ_MAX_BLOCKED', schema: positiveDuration, default: 1_800_000, doc: 'A job whose group stays blocked (paused, robots.txt unreachable) longer is dead-lettered' },
  maxPause: { scope: 'fleet', flag: '--max-pause', env: 'CRAWLQ_MAX_PAUSE', schema: positiveDuration, default: 3_600_000, doc: 'Cap on a Retry-After or admin pause of a group' },
  requestTimeout: { scope: 'fleet', flag: '--request-timeout', env: 'CRAWLQ_REQUEST_TIMEOUT', schema: positiveDuration, default: 30_000, doc: 'Whole-request timeout' },
  connectTimeout: { scope: 'fleet', flag: '--connect-timeout', env: 'CRAWLQ_CONNECT_TIMEOUT', schema: positiveDuration, default: 10_000, doc: 'TCP/TLS connect timeout' },
  responseTimeout: { scope: 'fleet', flag: '--response-timeout', env: 'CRAWLQ_RESPONSE_TIMEOUT', schema: positiveDuration, default: 15_000, doc: 'Time to the first response byte' },
  lookupTimeout: { scope: 'fleet', flag: '--lookup-timeout', env: 'CRAWLQ_LOOKUP_TIMEOUT', schema: positiveDuration, default: 5_000, doc: 'DNS lookup timeout' },
  fetchRetries: { scope: 'fleet', flag: '--fetch-retries', env: 'CRAWLQ_FETCH_RETRIES', schema: integer(0, 20), default: 2, doc: "got's own retries inside one attempt (timeouts, network errors, 408, 429, 5xx)" },
  fetchBackoff: { scope: 'fleet', flag: '--fetch-backoff', env: 'CRAWLQ_FETCH_BACKOFF', schema: duration, default: 500, doc: "Base of got's exponential backoff with jitter (0: retry at once)" },
  maxBodySize: { scope: 'fleet', flag: '--max-body-size', env: 'CRAWLQ_MAX_BODY_SIZE', schema: bytes, default: 10 * 1024 * 1024, doc: 'Largest body accepted, after decompression' },
  maxLinksPerPage: { scope: 'fleet', flag: '--max-links-per-page', env: 'CRAWLQ_MAX_LINKS_PER_PAGE', schema: integer(1, 1_000_000), default: 5_000, doc: 'Distinct links kept from one page (recorded and followed); the rest are counted in the record as linksTruncated' },
  render: { scope: 'fleet', flag: '--render', env: 'CRAWLQ_RENDER', schema: oneOf(['never', 'always', 'auto'] as const), default: 'never', doc: 'Render pages in a browser (the system Chromium): never, always, or auto: per group, where rendered samples find links or text the plain fetch misses (limitRules may set render per group)' },
  renderTimeout: { scope: 'fleet', flag: '--render-timeout', env: 'CRAWLQ_RENDER_TIMEOUT', schema: positiveDuration, default: 15_000, doc: 'Bound on rendering one page after its document arrived: its requests, the wait for network idle or waitFor, and the scroll and click steps' },
  renderResources: { scope: 'fleet', flag: '--render-resources', env: 'CRAWLQ_RENDER_RESOURCES', schema: list, default: [], doc: 'Resource types a rendering browser also requests: image, font, media (none by default: they change no link or text, and each would be a request to the site)' },
  maxRedirects: { scope: 'fleet', flag: '--max-redirects', env: 'CRAWLQ_MAX_REDIRECTS', schema: integer(0, 50), default: 10, doc: 'Redirect hops per chain, counted across the jobs a chain is handed to' },
  browserPages: { scope: 'process', flag: '--browser-pages', env: 'CRAWLQ_BROWSER_PAGES', schema: integer(1, 64), default: 2, doc: 'Pages a worker renders at once (one browser per worker, a context of its own per page slot, cleared and kept between pages); other jobs wait for a page' },
  browserRestartPages: { scope: 'process', flag: '--browser-restart-pages', env: 'CRAWLQ_BROWSER_RESTART_PAGES', schema: integer(1), default: 100, doc: "A worker's browser is replaced after rendering this many pages" },
  browserMaxMemory: { scope: 'process', flag: '--browser-max-memory', env: 'CRAWLQ_BROWSER_MAX_MEMORY', schema: bytes, default: 1_000_000_000, doc: "A worker's browser using more memory than this (all its processes, shared pages counted once: PSS) is replaced after its pages in hand" },
  chromiumPath: { scope: 'process', flag: '--chromium-path', env: 'CRAWLQ_CHROMIUM_PATH', schema: text().optional(), default: undefined, doc: 'Chromium executable for rendering; unset: the system one (/usr/bin/chromium, Homebrew\'s Chromium.app); never downloaded' },
  screenshot: { scope: 'process', flag: '--screenshot', env: 'CRAWLQ_SCREENSHOT', schema: text().optional(), default: undefined, doc: 'Directory for a PNG of every rendered page (unset: none); the record names its file' },
  maxSockets: { scope: 'process', flag: '--max-sockets', env: 'CRAWLQ_MAX_SOCKETS', schema: integer(1, 100_000), default: 256, doc: 'Keep-alive agent: sockets per origin' },
  maxFreeSockets: { scope: 'process', flag: '--max-free-sockets', env: 'CRAWLQ_MAX_FREE_SOCKETS', schema: integer(0, 100_000), default: 32, doc: 'Keep-alive agent: idle sockets kept per origin' },
  freeSocketTimeout: { scope: 'process', flag: '--free-socket-timeout', env: 'CRAWLQ_FREE_SOCKET_TIMEOUT', schema: positiveDuration, default: 15_000, doc: 'Keep-alive agent: idle socket lifetime' },
  robotsTtl: { scope: 'fleet', flag: '--robots-ttl', env: 'CRAWLQ_ROBOTS_TTL', schema: positiveDuration, default: 86_400_000, doc: 'How long a fetched robots.txt is trusted, fleet-wide' },
  robotsRetryBudget: { scope: 'fleet', flag: '--robots-retry-budget', env: 'CRAWLQ_ROBOTS_RETRY_BUDGET', schema: durationAtLeast(1_000, 'expected at least 1s'), default: 120_000, doc: "How long an unreachable robots.txt (5xx, timeout, refused) is retried before its host's waiting URLs are dead-lettered" },
  maxCrawlDelay: { scope: 'fleet', flag: '--max-crawl-delay', env: 'CRAWLQ_MAX_CRAWL_DELAY', schema: positiveDuration, default: 30_000, doc: 'Cap on a robots.txt Crawl-delay (it only ever slows a group down)' },
  sitemaps: { scope: 'process', flag: '--sitemaps', env: 'CRAWLQ_SITEMAPS', schema: boolean, default: false, doc: "Also enqueue the pages listed in the seeds' robots.txt Sitemap: lines" },
  shards: { scope: 'fleet', flag: '--shards', env: 'CRAWLQ_SHARDS', schema: integer(1, 1_024), default: 1, doc: 'Split the crawl over this many Redis keyspaces (hash tags), each holding whole groups: on a Redis Cluster they spread over its masters. Fixed for the crawl' },
  seenSet: { scope: 'fleet', flag: '--seen-set', env: 'CRAWLQ_SEEN_SET', schema: oneOf(['exact', 'bloom'] as const), default: 'exact', doc: 'Dedupe with an exact set, or a Bloom filter of bounded memory (a false positive skips a URL)' },
  expectedUrls: { scope: 'fleet', flag: '--expected-urls', env: 'CRAWLQ_EXPECTED_URLS', schema: integer(1_000, 10_000_000_000), default: 10_000_000, doc: 'Bloom mode: URLs the filter is sized for' },
  falsePositiveRate: { scope: 'fleet', flag: '--false-positive-rate', env: 'CRAWLQ_FALSE_POSITIVE_RATE', schema: fraction, default: 0.001, doc: 'Bloom mode: share of new URLs wrongly taken as seen, at --expected-urls' },
  ignoreRobots: { scope: 'fleet', flag: '--ignore-robots', env: 'CRAWLQ_IGNORE_ROBOTS', schema: boolean, default: false, doc: 'Do not fetch or obey robots.txt' },
  dlqMaxAge: { scope: 'process', flag: '--dlq-max-age', env: 'CRAWLQ_DLQ_MAX_AGE', schema: positiveDuration.optional(), default: undefined, doc: 'Dead letters older than this are deleted by workers (unset: kept until reviewed)' },
  dlqMaxCount: { scope: 'process', flag: '--dlq-max-count', env: 'CRAWLQ_DLQ_MAX_COUNT', schema: integer(1).optional(), default: undefined, doc: 'Only the newest this many dead letters are kept (unset: all)' },
  smtpUrl: { scope: 'process', flag: '--smtp-url', env: 'SMTP_URL', schema: smtpUrl.optional(), default: undefined, doc: 'SMTP server for alerts (smtp:// or smtps://); unset: .eml files in the outbox' },
  smtpUser: { scope: 'process', flag: undefined, env: 'SMTP_USER', schema: z.string({ error: 'expected text' }).optional(), default: undefined, doc: 'SMTP user, if not in SMTP_URL' },
  smtpPassword: { scope: 'process', flag: undefined, env: 'SMTP_PASSWORD', schema: z.string({ error: 'expected text' }).optional(), default: undefined, doc: 'SMTP password, if not in SMTP_URL' },
  alertFrom: { scope: 'process', flag: '--alert-from', env: 'ALERT_FROM', schema: z.string({ error: 'expected an address such as crawlq <crawlq@example.org>' }).min(3), default: 'crawlq <crawlq@localhost>', doc: 'From address of alert e-mails' },
  alertTo: { scope: 'process', flag: '--alert-to', env: 'ALERT_TO', schema: list, default: [], doc: 'Alert recipients, comma-separated' },
  outboxDir: { scope: 'process', flag: '--outbox-dir', env: 'CRAWLQ_OUTBOX_DIR', schema: text().optional(), default: undefined, doc: 'Where alerts go as .eml files without SMTP (default: <state-dir>/outbox)' },
  alertDelay: { scope: 'process', flag: '--alert-delay', env: 'CRAWLQ_ALERT_DELAY', schema: duration, default: 30_000, doc: 'Delay before the first dead-letter alert goes out (0: at once)' },
  alertWindow: { scope: 'process', flag: '--alert-window', env: 'CRAWLQ_ALERT_WINDOW', schema: duration, default: 900_000, doc: 'At most one alert e-mail per window, fleet-wide (0: no wait between e-mails)' },
  dashboardUrl: { scope: 'process', flag: '--dashboard-url', env: 'CRAWLQ_DASHBOARD_URL', schema: httpUrl.optional(), default: undefined, doc: 'Public dashboard address, quoted in alert e-mails' },
  dashboardHost: { scope: 'process', flag: '--host', env: 'CRAWLQ_DASHBOARD_HOST', schema: text(), default: '127.0.0.1', doc: 'Dashboard bind address' },
  dashboardPort: { scope: 'process', flag: '--port', env: 'CRAWLQ_DASHBOARD_PORT', schema: integer(0, 65_535), default: 3100, doc: 'Dashboard port' },
  dashboardUser: { scope: 'process', flag: undefined, env: 'CRAWLQ_DASHBOARD_USER', schema: text().optional(), default: undefined, doc: 'Dashboard basic-auth user (required off loopback)' },
  dashboardPassword: { scope: 'process', flag: undefined, env: 'CRAWLQ_DASHBOARD_PASSWORD', schema: text().optional(), default: undefined, doc: 'Dashboard basic-auth password' },
  logLevel: { scope: 'process', flag: '--log-level', env: 'CRAWLQ_LOG_LEVEL', schema: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const), default: 'info', doc: 'Least severe log level written' },
  logFormat: { scope: 'process', flag: '--log-format', env: 'CRAWLQ_LOG_FORMAT', schema: oneOf(['auto', 'json', 'pretty'] as const), default: 'auto', doc: 'Log lines as JSON, short human lines, or auto: JSON unless stderr is a terminal' },
  statsInterval: { scope: 'process', flag: '--stats-interval', env: 'CRAWLQ_STATS_INTERVAL', schema: duration, default: 60_000, doc: 'Workers log a stats line this often (0: never)' },
  metricsPort: { scope: 'process', flag: '--metrics-port', env: 'CRAWLQ_METRICS_PORT', schema: integer(0, 65_535).optional(), default: undefined, doc: 'Serve /metrics, /healthz and /readyz on this port (unset: off; `crawl` workers use PORT+index)' },
  metricsHost: { scope: 'process', flag: '--metrics-host', env: 'CRAWLQ_METRICS_HOST', schema: text(), default: '127.0.0.1', doc: 'Bind address of the metrics endpoints' },
  revisit: { scope: 'fleet', flag: '--revisit', env: 'CRAWLQ_REVISIT', schema: revisit, default: 'off', doc: 'Continuous crawl: off (one pass), a fixed interval such as 1h, or adaptive (each URL between --revisit-min and --revisit-max, sooner when it changes); revisits send If-None-Match/If-Modified-Since' },
  revisitMin: { scope: 'fleet', flag: '--revisit-min', env: 'CRAWLQ_REVISIT_MIN', schema: durationAtLeast(1_000, 'expected at least 1s'), default: 3_600_000, doc: '--revisit adaptive: the shortest interval between two fetches of a URL' },
  revisitMax: { scope: 'fleet', flag: '--revisit-max', env: 'CRAWLQ_REVISIT_MAX', schema: durationAtLeast(1_000, 'expected at least 1s'), default: 2_592_000_000, doc: '--revisit adaptive: the longest interval between two fetches of a URL' },
  revisitIgnore: { scope: 'fleet', flag: '--revisit-ignore', env: 'CRAWLQ_REVISIT_IGNORE', schema: text(1_000).optional(), default: undefined, doc: 'CSS selector of parts left out of the content signature (ads, clocks): a page that changed only there counts as unchanged' },
  fields: { scope: 'fleet', flag: undefined, env: undefined, schema: z.array(fieldRuleSchema), default: [], doc: 'Config file only: extra fields to extract with CSS selectors' },
} as const;

export type OptionName = keyof typeof OPTION_TABLE;

/** Who owns an option's value: the whole fleet (the crawl definition) or each process. */
export type OptionScope = 'fleet' | 'process';

type OptionTable = typeof OPTION_TABLE;
/** The parsed, validated configuration. */
export type CrawlqConfig = {
  readonly [K in OptionName]: z.output<OptionTable[K]['schema']>;
} & {
  /** Options set by a flag, the environment or the config file rather than left at their default. */
  readonly explicit: readonly OptionName[];
};

/** How a value of this option is spelled on the command line (for messages that quote it back). */
export function optionValueKind(name: OptionName): 'duration' | 'bytes' | 'rate' | 'url' | 'other' {
  const schema: z.ZodType = OPTION_TABLE[name].schema;
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  if (DURATION_SCHEMAS.has(inner)) return 'duration';
  if (inner === bytes) return 'bytes';
  if (inner === rate) return 'rate';
  if (URL_SCHEMAS.has(inner)) return 'url';
  return 'other';
}
