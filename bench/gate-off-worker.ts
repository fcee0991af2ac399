// A crawl worker with the group gate replaced by one that admits everything at
// once without touching Redis: the crawl benchmark's baseline for what the
// gate costs when its limits are out of the way. Same flags as `crawlq worker`
// in crawl-throughput.ts; never used outside the benchmark.
import { loadConfig } from '@crawlq/config';
import { runWorkerUntilStopped, stopOnSignals } from '@crawlq/crawler';
import type { GroupLimiter, GroupStatus, LimitPolicy } from '@crawlq/group-limiter';
import { DEFAULT_LIMIT_POLICY, resolveLimits } from '@crawlq/group-limiter';

const openGate: GroupLimiter = {
  acquire: (request) => {
    const now = performance.now();
    return Promise.resolve({ admitted: true, startInMs: 0, startAt: Date.now(), localStartAt: now, startBy: Number.POSITIVE_INFINITY, confirmBeforeStart: false, lease: { group: request.group, leaseId: request.leaseId } });
  },
  // No job waits for its slot: the open gate admits at once.
  localTimeOf: () => undefined,
  confirmStart: () => Promise.resolve({ go: true }),
  release: () => Promise.resolve(null),
  flush: () => Promise.resolve(),
  abandon: () => Promise.resolve(),
  retakeLateStart: () => Promise.resolve(null),
  reportSlip: () => Promise.resolve(),
  // The frontier's release step keeps the real limiter (crawl-services): this baseline removes the per-request gate only.
  runPaced: () => Promise.reject(new Error('the open gate does not pace backlog releases')),
  // crawl-services publishes the policy through the real limiter whatever these do: the release step paces by it.
  setPolicy: () => Promise.resolve({ changed: false, previous: null }),
  getPolicy: (): Promise<LimitPolicy | null> => Promise.resolve(DEFAULT_LIMIT_POLICY),
  limitsFor: (group) => resolveLimits(DEFAULT_LIMIT_POLICY, group).limits,
  pause: () => Promise.resolve(),
  resume: () => Promise.resolve(),
  setMinInterval: () => Promise.resolve(),
  status: (): Promise<GroupStatus> => Promise.reject(new Error('the open gate keeps no status')),
  list: () => Promise.resolve([]),
  globalStatus: () => Promise.resolve({ rate: null, paceMs: 0, admitted: 0, deferred: 0 }),
  servers: () => Promise.resolve([]),
};

const concurrency = Number(process.argv[2] ?? '16');
const out = process.argv[3] ?? 'out.jsonl';
const config = loadConfig({
  flags: { namespace: 'bench', allowPrivateNetwork: true, scope: 'any', maxDepth: 1000, rate: 'none', domainConcurrency: 10_000, concurrency, out },
});
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) throw new Error('REDIS_URL is required');
// Stopped like `crawlq worker`: the first SIGTERM or SIGINT begins a graceful stop, a second does not cut it short.
await runWorkerUntilStopped({ config, redisUrl, cli: 'pnpm crawlq', limiter: openGate, log: (line) => process.stdout.write(`${line}\n`), stop: stopOnSignals() });
