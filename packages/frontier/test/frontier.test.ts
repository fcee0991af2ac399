import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { crawlJobUnits, openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { urlFingerprint } from '@crawlq/urls';
import { limiterKeys } from '@crawlq/group-limiter';
import { gateKeyPrefix } from '@crawlq/redis';
import { Frontier, RevisitStore, enqueueLines, frontierKeys, readBacklogEntries, readCrawlProgress, revisitBuckets, type FrontierSettings, type RejectedUrl } from '../src/index.js';
import { releaseAll, testPacer, UNPACED } from './support.js';

let redis: TestRedis;
let queue: CrawlQueue;
let namespace: string;

const baseSettings: FrontierSettings = {
  scope: 'host',
  include: [],
  exclude: [],
  maxDepth: 2,
  groupBy: 'host',
  sortQuery: false,
  jobPolicy: { attempts: 3, backoffMs: 100 },
};

let current: Frontier | undefined;
function frontier(settings: Partial<FrontierSettings> = {}, policy = UNPACED): Frontier {
  const client = redis.client();
  current = new Frontier({ redis: client, queue, namespace, settings: { ...baseSettings, ...settings }, pacer: testPacer(client, namespace, policy) });
  return current;
}

/** Every admitted URL, released into the queue first. */
async function queuedUrls(): Promise<string[]> {
  if (current) await releaseAll(current);
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
  return jobs.flatMap((job) => crawlJobUnits(String(job.id), job.data).map((unit) => unit.url)).sort();
}

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await queue.close();
  await redis.stop();
});
beforeEach(async () => {
  if (queue) await queue.close();
  namespace = `test-${randomUUID()}`;
  queue = openCrawlQueue({ url: redis.url }, namespace);
});

/**
 * A group the gate has admitted once, whose mean request time is `holdMs`, as
 * its releases would teach it (set, not sampled: a loaded machine's timers run late).
 */
async function admittedWithHold(limiter: ReturnType<typeof testPacer>, group: string, holdMs: number): Promise<void> {
  const probe = await limiter.acquire({ group, leaseId: `probe-${group}` });
  if (!probe.admitted) throw new Error(`${group}: the probe was not admitted`);
  await limiter.release(probe.lease, { sent: true, status: 200 });
  await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group(group), 'holdMs', String(holdMs));
}

describe('Frontier', () => {
  it('normalises, dedupes across spellings and batches, and reports rejects by position', async () => {
    const f = frontier();
    const result = await f.addSeeds([
      'HTTP://A.test:80/x#frag',
      'http://a.test/x',
      '',
      'ftp://a.test/',
      'http://[bad',
      'http://b.test/?utm_source=x',
    ]);
    expect(result.accepted).toBe(2);
    expect(result.duplicate).toBe(1);
    expect(result.rejected.map((r: RejectedUrl) => [r.index, r.reason])).toEqual([
      [2, 'empty'],
      [3, 'scheme'],
      [4, 'malformed'],
    ]);
    const again = await f.addSeeds(['http://a.test/x']);
    expect(again).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await queuedUrls()).toEqual(['http://a.test/x', 'http://b.test/']);
  });

  it('keeps admitted URLs in the backlog until released; a released job has the fingerprint as id and priority depth + 1', async () => {
    const f = frontier();
    await f.addSeeds(['http://fast.test/', 'http://other.test/']);
    expect(await f.backlogSize()).toBe(2);
    expect(await queue.getJobs(['waiting', 'prioritized', 'delayed'])).toHaveLength(0);
    expect(await releaseAll(f)).toBe(2);
    expect(await f.backlogSize()).toBe(0);
    const jobs = await queue.getJobs(['prioritized']);
    for (const job of jobs) {
      expect(job.id).toBe(urlFingerprint(job.data.url));
      expect(job.priority).toBe(1);
      expect(job.opts).toMatchObject({ attempts: 3, backoff: { type: 'exponential', delay: 100 } });
    }
    expect(jobs.map((job) => job.data).sort((a, b) => a.url.localeCompare(b.url))).toEqual([
      { url: 'http://fast.test/', depth: 0, group: 'fast.test' },
      { url: 'http://other.test/', depth: 0, group: 'other.test' },
    ]);
  });

  it('a URL that comes back while the job that fetched it is still there gets a job of its own, not a duplicate BullMQ drops', async () => {
    const f = frontier();
    await f.addSeeds(['http://again.test/']);
    expect(await releaseAll(f)).toBe(1);
    const id = urlFingerprint('http://again.test/');
    expect((await queue.getJobs(['prioritized'])).map((job) => job.id)).toEqual([id]);
    // A revisit of it comes due while that job still runs (here: still waits).
    const keys = frontierKeys(namespace);
    const store = new RevisitStore({ redis: redis.client(), namespace, buckets: revisitBuckets(1_000) });
    await store.pushToBacklog(keys.backlog, keys.backlogCount, [{ group: 'again.test', depth: 0, id, url: 'http://again.test/' }]);
    expect(await releaseAll(f)).toBe(1);
    const jobs = await queue.getJobs(['prioritized']);
    expect(jobs.map((job) => job.data.url)).toEqual(['http://again.test/', 'http://again.test/']);
    expect(new Set(jobs.map((job) => job.id)).size).toBe(2);
    expect(jobs.map((job) => job.id)).toContain(id);
    expect(await f.backlogSize()).toBe(0);
  });

  it('packs a group into jobs of several URLs, breadth-first, while the backlogs hold that many times the queue target; one URL per job once they do not', async () => {
    const f = frontier({ scope: 'any', maxDepth: 5 }, { defaults: { rate: null, concurrency: 1000 } });
    await f.addDiscovered(['http://many.test/deeper'], 0);
    await f.addSeeds(Array.from({ length: 20 }, (_, i) => `http://many.test/${i}`));
    // 21 waiting over a target of 4: up to 5 a job, 3 asked for.
    expect(await f.release({ room: 1, readyTarget: 4, slowStart: false, maxUrlsPerJob: 3 })).toMatchObject({ jobs: 1, released: 3 });
    const [first] = await queue.getJobs(['prioritized']);
    expect(first?.id).toBe(urlFingerprint('http://many.test/0'));
    expect(crawlJobUnits(String(first?.id), first!.data)).toEqual([0, 1, 2].map((i) => ({ id: urlFingerprint(`http://many.test/${i}`), url: `http://many.test/${i}`, depth: 0 })));
    // Each release fills the queue up to its target of 4 jobs; the URLs per job
    // fall with the backlog (18 waiting: 3 a job; 6 waiting, under twice the target: 1).
    const sizes: number[][] = [];
    const urls: string[] = [];
    for (let round = 0; round < 4; round += 1) {
      // Oldest first: the order workers take them in.
      const jobs = await queue.getJobs(['prioritized'], 0, -1, true);
      sizes.push(jobs.map((job) => crawlJobUnits(String(job.id), job.data).length));
      for (const job of jobs) {
        expect(job.id).toBe(urlFingerprint(job.data.url));
        urls.push(...crawlJobUnits(String(job.id), job.data).map((unit) => unit.url));
        await job.remove();
      }
      await f.release({ room: 100, readyTarget: 4, slowStart: false, maxUrlsPerJob: 3 });
    }
    expect(sizes).toEqual([[3], [3, 3, 3, 3], [1, 1, 1, 1], [1, 1]]);
    // Breadth-first across jobs: the seeds in order, then the deeper link.
    expect(urls).toEqual([...Array.from({ length: 20 }, (_, i) => `http://many.test/${i}`), 'http://many.test/deeper']);
    // 6 waiting over a target of 4 (under twice it): one per job, so they can all run at once.
    await f.addSeeds(Array.from({ length: 6 }, (_, i) => `http://few.test/${i}`));
    expect(await f.release({ room: 100, readyTarget: 4, slowStart: false, maxUrlsPerJob: 3 })).toMatchObject({ jobs: 4, released: 4 });
    // With slow start, a group's first job is one URL, whatever its backlog: its request alone shows the site.
    for (const job of await queue.getJobs(['prioritized'])) await job.remove();
    await f.addSeeds(Array.from({ length: 20 }, (_, i) => `http://new.test/${i}`));
    await f.release({ room: 100, readyTarget: 4, maxUrlsPerJob: 3 });
    const firstOfNew = (await queue.getJobs(['prioritized'])).filter((job) => job.data.group === 'new.test');
    expect(firstOfNew.map((job) => crawlJobUnits(String(job.id), job.data).length)).toEqual([1]);
  });

  it('probes a group once: one whose backlog ran dry after a request of it was answered goes on without a second slow start', async () => {
    const policy = { defaults: { rate: null, concurrency: 1000 } };
    const f = frontier({ scope: 'any' }, policy);
    const unitsOf = async (group: string) =>
      (await queue.getJobs(['prioritized'])).filter((job) => job.data.group === group).map((job) => crawlJobUnits(String(job.id), job.data).length);
    await f.addSeeds(['http://again.test/0']);
    await f.release({ room: 100, readyTarget: 4, maxUrlsPerJob: 3 });
    expect(await unitsOf('again.test')).toEqual([1]);
    // The probe's request answered (its hold time recorded), its job done, the backlog dry.
    const limiter = testPacer(redis.client(), namespace, policy);
    const probe = await limiter.acquire({ group: 'again.test', leaseId: 'probe' });
    if (!probe.admitted) throw new Error('the probe was not admitted');
    await limiter.release(probe.lease, { sent: true, status: 200 });
    for (const job of await queue.getJobs(['prioritized'])) await job.remove();
    // The probe done, the next URLs go out and the backlog runs dry.
    await f.addSeeds(['http://again.test/1']);
    await f.release({ room: 100, readyTarget: 4, maxUrlsPerJob: 3 });
    expect(await unitsOf('again.test')).toEqual([1]);
    for (const job of await queue.getJobs(['prioritized'])) await job.remove();
    // More of it, and a new group beside it: only the new one is probed.
    await f.addSeeds([...Array.from({ length: 20 }, (_, i) => `http://again.test/${i + 2}`), ...Array.from({ length: 20 }, (_, i) => `http://fresh.test/${i}`)]);
    await f.release({ room: 100, readyTarget: 100, readyTargetShare: 4, maxUrlsPerJob: 3 });
    expect(await unitsOf('fresh.test')).toEqual([1]);
    const again = await unitsOf('again.test');
    expect(again.length).toBeGreaterThan(1);
    expect(Math.max(...again)).toBe(3);
  });

  it("gives a rate-limited group with short requests its slots in jobs of several URLs, taken in turn: a job's slots are twice the hold time apart", async () => {
    const policy = {
      defaults: { rate: null, concurrency: 1000 },
      rules: [
        { match: 'slow.test', rate: { max: 2, durationMs: 1_000 }, concurrency: 4 },
        { match: '*.test', rate: { max: 20, durationMs: 1_000 }, concurrency: 4 },
      ],
    };
    const limiter = testPacer(redis.client(), namespace, policy);
    const slotsOf = async (group: string, holdMs: number) => {
      const probe = await limiter.acquire({ group, leaseId: `probe-${group}` });
      if (!probe.admitted) throw new Error('the probe was not admitted');
      await limiter.release(probe.lease, { sent: true, status: 200 });
      await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group(group), 'holdMs', String(holdMs));
      const f = frontier({ scope: 'any' }, policy);
      await f.addSeeds(Array.from({ length: 30 }, (_, i) => `http://${group}/${i}`));
      const startedAt = Date.now();
      // Released once its first slot (after the probe's) is within the window.
      let jobs: Awaited<ReturnType<CrawlQueue['getJobs']>> = [];
      for (let i = 0; i < 40 && !jobs.some((job) => job.data.group === group); i += 1) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        await f.release({ room: 100, readyTarget: 100, maxReadyPerGroup: 100, slowStart: false, maxUrlsPerJob: 4 });
        jobs = await queue.getJobs(['prioritized']);
      }
      const units = jobs.filter((job) => job.data.group === group).map((job) => crawlJobUnits(String(job.id), job.data));
      // Removed: the next group's jobs are counted alone.
      for (const job of jobs) await job.remove();
      return { startedAt, jobs: units };
    };
    // Requests of 10 ms, slots 50 ms apart: one job takes 4 slots in a row.
    const short = await slotsOf('short.test', 10);
    expect(short.jobs.map((units) => units.length)).toEqual([4]);
    // Requests of 40 ms: two jobs take the slots in turn, each one's 100 ms apart.
    const long = await slotsOf('long.test', 40);
    expect(long.jobs.map((units) => units.length)).toEqual([4, 4]);
    // Slots 500 ms apart, beyond the window: a job would hold its worker longer per URL than
    // a job of one URL waits for its slot, so each job has one.
    const slow = await slotsOf('slow.test', 10);
    expect(slow.jobs.map((units) => units.length)).toEqual([1]);
    for (const [{ jobs, startedAt }, spacing] of [[short, 50], [long, 100]] as const) {
      for (const units of jobs) {
        const dues = units.map((unit) => unit.due ?? startedAt);
        // Each job's first slot is within the release window; the rest follow at the spacing.
        expect(dues[0]!).toBeLessThanOrEqual(Date.now() + 400);
        for (let i = 1; i < dues.length; i += 1) expect(dues[i]! - dues[i - 1]!).toBeGreaterThanOrEqual(spacing - 1);
      }
      // Together the jobs use every slot once: never two starts closer than the rate.
      const all = jobs.flat().map((unit) => unit.due ?? startedAt).sort((a, b) => a - b);
      for (let i = 1; i < all.length; i += 1) expect(all[i]! - all[i - 1]!).toBeGreaterThanOrEqual(49);
    }
  });

  it('packs a capped group whose rate cannot bind (its requests outlast cap intervals, or the rate needs more jobs than may wait) as a group without a rate: several URLs a job, no start slots', async () => {
    const policy = {
      defaults: { rate: null, concurrency: 1000 },
      rules: [
        // 100,000/s: 1,000 requests of 30 ms at once make 33,000/s, and using the rate would take 1,500 jobs.
        { match: 'fast.test', rate: { max: 100_000, durationMs: 1_000 }, concurrency: 1_000 },
        // 20/s with a cap of 4: requests of 300 ms make 13/s at most, the cap binds first.
        { match: 'capped.test', rate: { max: 20, durationMs: 1_000 }, concurrency: 4 },
        // 20/s with a cap of 4 and requests of 10 ms: the rate binds (slots, as the tests above show).
        { match: 'bound.test', rate: { max: 20, durationMs: 1_000 }, concurrency: 4 },
      ],
    };
    const limiter = testPacer(redis.client(), namespace, policy);
    for (const [group, holdMs] of [['fast.test', 30], ['capped.test', 300], ['bound.test', 10]] as const) {
      const probe = await limiter.acquire({ group, leaseId: `probe-${group}` });
      if (!probe.admitted) throw new Error('the probe was not admitted');
      await limiter.release(probe.lease, { sent: true, status: 200 });
      await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group(group), 'holdMs', String(holdMs));
    }
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds(['fast.test', 'capped.test', 'bound.test'].flatMap((host) => Array.from({ length: 21 }, (_, i) => `http://${host}/${i}`)));
    // 60 waiting over a share of 4: up to 15 a job, capped at 3 here.
    await f.release({ room: 100, readyTarget: 100, readyTargetShare: 4, slowStart: false, maxUrlsPerJob: 3 });
    const jobs = await queue.getJobs(['prioritized']);
    const of = (group: string) => jobs.filter((job) => job.data.group === group).map((job) => crawlJobUnits(String(job.id), job.data));
    for (const group of ['fast.test', 'capped.test']) {
      const units = of(group);
      expect(units.length, group).toBeGreaterThan(0);
      // Several URLs a job (the window's slots still bound how many go per release).
      expect(Math.max(...units.map((job) => job.length)), group).toBe(3);
      for (const job of units) {
        expect(job.length, group).toBeLessThanOrEqual(3);
        expect(job.filter((unit) => unit.due !== undefined)).toEqual([]);
      }
    }
    // The cap still bounds the capped group's jobs: four at most (each holds one slot at a time).
    expect(of('capped.test').length).toBeLessThanOrEqual(4);
    // Where the rate binds, the group's jobs keep their start slots.
    expect(of('bound.test').flat().filter((unit) => unit.due !== undefined).length).toBeGreaterThan(0);
  });

  it("hands a job's URLs back to the front of their backlog with the job's change, only under the job's lock", async () => {
    const f = frontier({ scope: 'any' });
    await f.addSeeds(Array.from({ length: 6 }, (_, i) => `http://back.test/${i}`));
    expect(await f.release({ room: 1, readyTarget: 1, slowStart: false, maxUrlsPerJob: 4 })).toMatchObject({ jobs: 1, released: 4 });
    const [job] = await queue.getJobs(['prioritized']);
    const jobId = String(job?.id);
    const units = crawlJobUnits(jobId, job!.data);
    const client = redis.client();
    await client.set(`${queue.toKey(jobId)}:lock`, 'token-1');
    // Another worker's token changes nothing.
    expect(await f.requeue({ group: 'back.test', jobId, token: 'token-2', units: units.slice(2), progress: 4 })).toBe(false);
    expect(await f.backlogSize()).toBe(2);
    expect(await f.requeue({ group: 'back.test', jobId, token: 'token-1', units: units.slice(2), progress: 4 })).toBe(true);
    expect(await f.backlogSize()).toBe(4);
    expect((await queue.getJob(jobId))?.progress).toBe(4);
    // Or the job becomes its first URL alone.
    const alone = { url: units[0]!.url, depth: 0, group: 'back.test' };
    expect(await f.requeue({ group: 'back.test', jobId, token: 'token-1', units: [], data: alone })).toBe(true);
    expect((await queue.getJob(jobId))?.data).toEqual(alone);
    await client.del(`${queue.toKey(jobId)}:lock`);
    await job?.remove();
    // The URLs handed back come out first, in their order, before those that waited behind them.
    const order: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      expect((await f.release({ room: 1, readyTarget: 1_000, slowStart: false, maxUrlsPerJob: 1 })).released).toBe(1);
      order.push(...(await queue.getJobs(['prioritized'])).map((j) => j.data.url).filter((url) => !order.includes(url)));
    }
    expect(order).toEqual([2, 3, 4, 5].map((i) => `http://back.test/${i}`));
  });

  it("gives back the start slots of the URLs a job hands back: a rate-limited group whose jobs fail at their first URL is due again at once, not after the job's last slot", async () => {
    // 3 a second, short requests: a release gives one job 8 slots in a row, 2.3 s of them.
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: 'fail.test', rate: { max: 3, durationMs: 1_000 }, concurrency: 2 }] };
    const limiter = testPacer(redis.client(), namespace, policy);
    const probe = await limiter.acquire({ group: 'fail.test', leaseId: 'probe' });
    if (!probe.admitted) throw new Error('the probe was not admitted');
    await limiter.release(probe.lease, { sent: true, status: 200 });
    await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group('fail.test'), 'holdMs', '10');
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds(Array.from({ length: 20 }, (_, i) => `http://fail.test/${i}`));
    const client = redis.client();
    const releaseOptions = { room: 10, readyTarget: 10, slowStart: false, maxUrlsPerJob: 8 } as const;
    // Each job's first URL fails for good (a full disk): it hands the rest back and becomes that URL alone.
    const failed: string[] = [];
    const deadline = Date.now() + 60_000;
    while (failed.length < 3 && Date.now() < deadline) {
      const released = await f.release(releaseOptions);
      const jobs = await queue.getJobs(['prioritized']);
      if (released.jobs === 0 || jobs.length === 0) {
        // Not due: the group's score says when. Before the fix, that is after the last slot the
        // failed job handed back (2 s and more), however many URLs it handed back.
        expect(released.nextDueMs ?? 0, `${failed.length} jobs failed, the group waits`).toBeLessThanOrEqual(400);
        await sleep(Math.max(10, released.nextDueMs ?? 0));
        continue;
      }
      for (const job of jobs) {
        const units = crawlJobUnits(String(job.id), job.data);
        expect(units.length).toBeGreaterThan(1);
        await client.set(`${queue.toKey(String(job.id))}:lock`, 'token');
        const alone = { url: units[0]!.url, depth: units[0]!.depth, group: 'fail.test' };
        expect(await f.requeue({ group: 'fail.test', jobId: String(job.id), token: 'token', units: units.slice(1), data: alone })).toBe(true);
        await client.del(`${queue.toKey(String(job.id))}:lock`);
        await job.remove();
        failed.push(units[0]!.url);
      }
    }
    expect(failed).toEqual(['http://fail.test/0', 'http://fail.test/1', 'http://fail.test/2']);
    // Nothing lost: the URLs not yet failed are all back in the backlog.
    expect(await f.backlogSize()).toBe(17);
  });

  it("lets a job done with its URLs go on with its group's next ones, with the slots a release would give them: only under its lock, while no job waits for a worker, for a group one job can pace", async () => {
    // 5 a second, requests of 10 ms: one job keeps the pace (its slots one after another).
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: '*.test', rate: { max: 5, durationMs: 1_000 }, concurrency: 2 }] };
    const limiter = testPacer(redis.client(), namespace, policy);
    await admittedWithHold(limiter, 'go.test', 10);
    // Requests of 250 ms against slots 200 ms apart: two jobs take the slots in turn, which one job cannot.
    await admittedWithHold(limiter, 'long.test', 250);
    const groupKey = (group: string) => limiterKeys(gateKeyPrefix(namespace)).group(group);
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds(['http://go.test/0', 'http://long.test/0']);
    let released: Awaited<ReturnType<CrawlQueue['getJobs']>> = [];
    const releasedFrom = Date.now();
    for (let i = 0; i < 40 && released.length < 2; i += 1) {
      if (i > 0) await sleep(50);
      await f.release({ room: 10, readyTarget: 10, slowStart: false, maxUrlsPerJob: 4 });
      released = await queue.getJobs(['prioritized']);
    }
    const job = released.find((j) => j.data.group === 'go.test');
    const other = released.find((j) => j.data.group === 'long.test');
    const jobId = String(job?.id);
    // Its slot; a job without one got a slot already past when it was released, which
    // is then the release's moment: no earlier than the first release asked (a loaded
    // machine can get there late, and this test's own clock then reads later still).
    const firstSlot = job?.data.due ?? releasedFrom;
    const client = redis.client();
    const prioritized = queue.toKey('prioritized');
    await client.set(`${queue.toKey(jobId)}:lock`, 'token-1');
    await client.set(`${queue.toKey(String(other?.id))}:lock`, 'token-1');
    // The pages of both jobs found more links of their groups.
    await f.addSeeds(Array.from({ length: 6 }, (_, i) => `http://go.test/${i + 1}`));
    await f.addSeeds(['http://long.test/1']);
    const request = { group: 'go.test', jobId, token: 'token-1', maxWaiting: 0, slowStart: false, maxUrlsPerJob: 4 } as const;
    // Both jobs still wait in the queue: a worker going on would make them wait longer.
    expect(await f.continueJob(request)).toBeUndefined();
    await client.zrem(prioritized, jobId, String(other?.id));
    // Another worker's token changes nothing.
    expect(await f.continueJob({ ...request, token: 'token-2' })).toBeUndefined();
    expect(await f.backlogSize()).toBe(7);
    // The group whose requests last most of its spacing is not one job's to go on with.
    expect(await f.continueJob({ ...request, group: 'long.test', jobId: String(other?.id) })).toBeUndefined();
    // Past the released job's slot, the group's next one is within the window at any speed.
    await sleep(Math.max(0, firstSlot + 1 - Date.now()));
    const data = await f.continueJob(request);
    expect(data).toBeDefined();
    const units = crawlJobUnits(jobId, data!);
    // The next four URLs in order, the first named by its own id (the job keeps its id).
    expect(units.map((unit) => unit.url)).toEqual([1, 2, 3, 4].map((i) => `http://go.test/${i}`));
    expect(units.map((unit) => unit.id)).toEqual(units.map((unit) => urlFingerprint(unit.url)));
    const job2 = await queue.getJob(jobId);
    expect(job2?.data).toEqual(data);
    expect(job2?.progress).toBe(0);
    expect(await f.backlogSize()).toBe(3);
    // Slots after the one the released job holds, one interval apart, as a release gives them
    // (a slot already past when taken goes without one: due at once).
    const dues = units.flatMap((unit) => (unit.due === undefined ? [] : [unit.due]));
    expect(dues.length).toBeGreaterThanOrEqual(2);
    expect(dues[0]!).toBeGreaterThanOrEqual(firstSlot + 199);
    for (let i = 1; i < dues.length; i += 1) expect(dues[i]! - dues[i - 1]!).toBeGreaterThanOrEqual(199);
    // A group whose next slot is past the window (its pacing far ahead): the job completes, and the release takes the rest later.
    await client.hset(groupKey('go.test'), 'tat', String(Date.now() + 60_000));
    expect(await f.continueJob(request)).toBeUndefined();
    expect(await f.backlogSize()).toBe(3);
    // A group without a rate gets as many URLs per job from the release already: no going on,
    // and its jobs hold nothing for a while after (no use asking).
    await f.addSeeds(['http://free.example/0', 'http://free.example/1']);
    f.holdBacklog('free.example')?.();
    expect(await f.continueJob({ ...request, group: 'free.example' })).toBeUndefined();
    expect(f.holdBacklog('free.example')).toBeUndefined();
    expect(await f.backlogSize()).toBe(5);
    // While a job of its group is in hand here, a group that starts waiting is due only after the hold...
    const groups = frontierKeys(namespace).backlogGroups;
    const unhold = f.holdBacklog('held.test');
    expect(unhold).toBeDefined();
    await f.addSeeds(['http://held.test/0']);
    unhold?.();
    expect(Number(await client.zscore(groups, 'held.test'))).toBeGreaterThanOrEqual(Date.now() + 1_000);
    await f.addSeeds(['http://other.test/0']);
    expect(Number(await client.zscore(groups, 'other.test'))).toBeLessThanOrEqual(Date.now() + 1);
    // ...unless the job declines to go on: the release has them at once.
    expect(await f.continueJob({ ...request, group: 'held.test' })).toBeUndefined();
    expect(Number(await client.zscore(groups, 'held.test'))).toBeLessThanOrEqual(Date.now() + 1);
  });

  it("puts a drained group's next slots after the ones its jobs hold: links added while those jobs wait do not get slots on top of theirs; a group that adapts its pace forgets them and probes again", async () => {
    // 5 a second, short requests: a job takes every slot of the backlog, 200 ms apart.
    const policy = {
      defaults: { rate: null, concurrency: 1000 },
      rules: [
        { match: 'dry.test', rate: { max: 5, durationMs: 1_000 }, concurrency: 2 },
        { match: 'adapts.test', rate: { max: 5, durationMs: 1_000 }, concurrency: 2, adaptive: true },
      ],
    };
    const limiter = testPacer(redis.client(), namespace, policy);
    const f = frontier({ scope: 'any' }, policy);
    const releaseOptions = { room: 10, readyTarget: 10, maxUrlsPerJob: 8 } as const;
    const jobsOf = async (group: string) => {
      const jobs = (await queue.getJobs(['prioritized'])).filter((job) => job.data.group === group);
      for (const job of jobs) await job.remove();
      return jobs.map((job) => crawlJobUnits(String(job.id), job.data));
    };
    for (const group of ['dry.test', 'adapts.test']) {
      // Probed and answered: no slow start after this.
      const probe = await limiter.acquire({ group, leaseId: `probe-${group}` });
      if (!probe.admitted) throw new Error('the probe was not admitted');
      await limiter.release(probe.lease, { sent: true, status: 200 });
      await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group(group), 'holdMs', '10');
    }
    await f.addSeeds(['http://dry.test/a', 'http://dry.test/b', 'http://dry.test/c']);
    await f.release(releaseOptions);
    const [first] = await jobsOf('dry.test');
    expect(first?.map((unit) => unit.url)).toEqual(['http://dry.test/a', 'http://dry.test/b', 'http://dry.test/c']);
    const lastSlot = first?.at(-1)?.due;
    expect(lastSlot).toBeGreaterThan(0);
    // Its backlog is dry; its first page adds links before its job's later URLs start.
    await f.addSeeds(['http://dry.test/d', 'http://dry.test/e']);
    const deadline = Date.now() + 30_000;
    let second: Awaited<ReturnType<typeof jobsOf>> = [];
    while (second.length === 0 && Date.now() < deadline) {
      const released = await f.release(releaseOptions);
      second = await jobsOf('dry.test');
      // Due only once its next slot, after the job's last, is within the window.
      if (second.length === 0) await sleep(Math.max(10, released.nextDueMs ?? 10));
    }
    const slots = second.flat().map((unit) => unit.due ?? 0);
    expect(slots).toHaveLength(2);
    expect(Math.min(...slots)).toBeGreaterThanOrEqual((lastSlot ?? 0) + 200);

    // A group that adapts its pace: after the dry spell its next job is a probe of one URL again.
    await f.addSeeds(['http://adapts.test/a', 'http://adapts.test/b']);
    await f.release(releaseOptions);
    expect((await jobsOf('adapts.test')).map((units) => units.length)).toEqual([1]);
  });

  it("registers a group's bucket and the group itself only when a backlog list is new: a drained group comes back whole, a waiting one costs a push per URL", async () => {
    const f = frontier({ scope: 'any', maxDepth: 5 });
    const zadds = async () => Number(/^cmdstat_zadd:calls=(\d+)/m.exec(await redis.client().info('commandstats'))?.[1] ?? 0);
    await f.addDiscovered(['http://b.test/1', 'http://b.test/2'], 0);
    const before = await zadds();
    // Onto lists that exist: no bookkeeping.
    await f.addDiscovered(['http://b.test/3'], 0);
    await f.addDiscovered(['http://b.test/4', 'http://b.test/5'], 0);
    expect((await zadds()) - before).toBe(0);
    expect(await releaseAll(f)).toBe(5);
    // Drained: the group left the waiting groups; a new URL brings it back and it is released again.
    await f.addDiscovered(['http://b.test/6'], 0);
    expect(await releaseAll(f)).toBe(1);
    // A new bucket (another depth) of a waiting group is registered too.
    await f.addDiscovered(['http://b.test/7'], 0);
    await f.addDiscovered(['http://b.test/deep'], 3);
    expect(await releaseAll(f)).toBe(2);
    expect((await queuedUrls()).filter((url) => url.startsWith('http://b.test/'))).toHaveLength(8);
  });

  it("lists a group for `group list` at its first release, and does not list it again once it has been admitted", async () => {
    const f = frontier({ scope: 'any', maxDepth: 5 });
    const keys = limiterKeys(gateKeyPrefix(namespace));
    const sadds = async () => Number(/^cmdstat_sadd:calls=(\d+)/m.exec(await redis.client().info('commandstats'))?.[1] ?? 0);
    await f.addDiscovered(['http://listed.test/1'], 0);
    await releaseAll(f);
    expect(await redis.client().sismember(keys.groups, 'listed.test')).toBe(1);
    // Admitted (as a worker's gate does): the group's hash records it, and it stays listed.
    const admission = await testPacer(redis.client(), namespace).acquire({ group: 'listed.test', leaseId: randomUUID() });
    expect(admission.admitted).toBe(true);
    await f.addDiscovered(['http://listed.test/2'], 0);
    const before = await sadds();
    expect(await releaseAll(f)).toBe(1);
    // One SADD: the job's entry in the group's ready set; none for the groups list.
    expect((await sadds()) - before).toBe(1);
    expect(await redis.client().sismember(keys.groups, 'listed.test')).toBe(1);
  });

  it('releases a group lowest depth first, first in first out within a depth (breadth-first)', async () => {
    const f = frontier({ scope: 'any', maxDepth: 5 });
    await f.addDiscovered(['http://a.test/d3-1', 'http://a.test/d3-2'], 2);
    await f.addDiscovered(['http://a.test/d1-1', 'http://a.test/d1-2'], 0);
    await f.addSeeds(['http://a.test/']);
    const order: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      expect((await f.release({ room: 1, readyTarget: 1_000, slowStart: false })).released).toBe(1);
      const jobs = await queue.getJobs(['prioritized']);
      order.push(...jobs.map((job) => job.data.url).filter((url) => !order.includes(url)));
    }
    expect(order).toEqual(['http://a.test/', 'http://a.test/d1-1', 'http://a.test/d1-2', 'http://a.test/d3-1', 'http://a.test/d3-2']);
  });

  it('releases a higher priority of a group first, whatever its depth and when it was admitted; a URL handed back keeps its priority', async () => {
    const f = frontier({ scope: 'any', maxDepth: 5 });
    await f.addSeeds(['http://p.test/']);
    await f.addDiscovered(['http://p.test/low-1', 'http://p.test/low-2'], 0);
    await f.addDiscovered(['http://p.test/deep-high'], 3, { priority: 10 });
    await f.addDiscovered(['http://p.test/high-1', 'http://p.test/high-2'], 0, { priority: 10 });
    await f.addDiscovered(['http://p.test/top'], 1, { priority: 1_000 });
    await f.addDiscovered(['http://p.test/last'], 0, { priority: -3 });
    // Seen before: keeps its place, whatever priority it is given now.
    expect((await f.addDiscovered(['http://p.test/low-1'], 0, { priority: 50 })).duplicate).toBe(1);
    await expect(f.addDiscovered(['http://p.test/x'], 0, { priority: 1.5 })).rejects.toThrow(/priority: expected an integer/);
    await expect(f.addDiscovered(['http://p.test/x'], 0, { priority: 1_001 })).rejects.toThrow(/priority/);
    const entries = await readBacklogEntries(redis.client(), namespace);
    expect(entries.map((entry) => [entry.url.slice('http://p.test/'.length), entry.depth, entry.priority ?? 0])).toEqual([
      ['top', 2, 1_000],
      ['high-1', 1, 10],
      ['high-2', 1, 10],
      ['deep-high', 4, 10],
      ['', 0, 0],
      ['low-1', 1, 0],
      ['low-2', 1, 0],
      ['last', 1, -3],
    ]);
    // Released one a call: the queue's order is the backlog's.
    const order: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      expect((await f.release({ room: 1, readyTarget: 1_000, slowStart: false, maxUrlsPerJob: 1 })).released).toBe(1);
      order.push(...(await queue.getJobs(['prioritized'])).map((job) => job.data.url).filter((url) => !order.includes(url)));
    }
    expect(order).toEqual(['http://p.test/top', 'http://p.test/high-1', 'http://p.test/high-2']);
    // A job of several carries its priority per URL; handed back, they go back to their own bucket.
    expect(await f.release({ room: 1, readyTarget: 1_000, readyTargetShare: 1, slowStart: false, maxUrlsPerJob: 3 })).toMatchObject({ jobs: 1, released: 3 });
    const [batch] = (await queue.getJobs(['prioritized'])).filter((job) => !order.includes(job.data.url));
    const units = crawlJobUnits(String(batch?.id), batch!.data);
    expect(units.map((unit) => [unit.url, unit.priority])).toEqual([
      ['http://p.test/deep-high', 10],
      ['http://p.test/', undefined],
      ['http://p.test/low-1', undefined],
    ]);
    const client = redis.client();
    await client.set(`${queue.toKey(String(batch?.id))}:lock`, 'token');
    expect(await f.requeue({ group: 'p.test', jobId: String(batch?.id), token: 'token', units, progress: 3 })).toBe(true);
    const back = await readBacklogEntries(redis.client(), namespace);
    expect(back.map((entry) => entry.url.slice('http://p.test/'.length))).toEqual(['deep-high', '', 'low-1', 'low-2', 'last']);
  });

  it("releases a rate-limited group one start slot at a time, while other groups' URLs go at once", async () => {
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: 'slow.test', rate: { max: 1, durationMs: 30_000 } }] };
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds([1, 2, 3].flatMap((i) => [`http://slow.test/${i}`, `http://fast.test/${i}`]));
    expect(await releaseAll(f)).toBe(4);
    const released = (await queue.getJobs(['prioritized'])).map((job) => job.data.url).sort();
    expect(released).toEqual(['http://fast.test/1', 'http://fast.test/2', 'http://fast.test/3', 'http://slow.test/1']);
    expect(await f.backlogSize()).toBe(2);
    // The next slot is 30 s away: the group waits in the groups set until then.
    expect((await f.release({ room: 10, readyTarget: 1_000, slowStart: false })).released).toBe(0);
    expect(Number(await redis.client().zscore(frontierKeys(namespace).backlogGroups, 'slow.test'))).toBeGreaterThan(Date.now() + 20_000);
  });

  it('says how long until a group is next due, and runs no release script before then', async () => {
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: 'paced.test', rate: { max: 1, durationMs: 2_000 } }] };
    const f = frontier({ scope: 'any' }, policy);
    const options = { room: 10, readyTarget: 100, slowStart: false };
    expect((await f.release(options)).nextDueMs).toBeUndefined();
    await f.addSeeds([1, 2, 3].map((i) => `http://paced.test/${i}`));
    const first = await f.release(options);
    expect(first.released).toBe(1);
    // The next slot is 2 s after the first (and the gate's margin); its job is released the window (400 ms) ahead.
    expect(first.nextDueMs).toBeGreaterThanOrEqual(1_600);
    expect(first.nextDueMs).toBeLessThan(2_000);
    const client = redis.client();
    const scriptRuns = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
    const runsBefore = await scriptRuns();
    const early = await f.release(options);
    expect(early).toMatchObject({ released: 0, jobs: 0 });
    expect(early.nextDueMs).toBeGreaterThan(0);
    expect(early.nextDueMs).toBeLessThanOrEqual(first.nextDueMs!);
    expect(await scriptRuns()).toBe(runsBefore);
    await sleep(early.nextDueMs);
    expect((await f.release(options)).released).toBe(1);
    expect(await scriptRuns()).toBe(runsBefore + 1);
    // A group without a rate is due at once.
    await f.addSeeds(['http://free.test/1']);
    expect((await f.release({ ...options, room: 0 })).nextDueMs).toBe(0);
  });

  it('holds at most a concurrency cap of waiting jobs per group, and releases more once they are taken', async () => {
    const policy = { defaults: { rate: null, concurrency: 2 } };
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds(Array.from({ length: 5 }, (_, i) => `http://capped.test/${i}`));
    expect(await releaseAll(f)).toBe(2);
    const [taken] = await queue.getJobs(['prioritized']);
    await taken?.remove();
    expect(await releaseAll(f)).toBe(1);
    expect(await f.backlogSize()).toBe(2);
  });

  it('gives a group its rate holds back every slot of the window, each job with its slot; a group whose requests last its cap still gets the cap', async () => {
    const rate = { max: 20, durationMs: 1_000 };
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: '*.test', rate, concurrency: 4 }] };
    const f = frontier({ scope: 'any' }, policy);
    const limiter = testPacer(redis.client(), namespace, policy);
    // Each group's mean request time: 'quick' well inside its 50 ms spacing, 'long' at 300 ms (four
    // at a time make 13/s: the cap binds, not the rate). Sampled with timers, a loaded machine once
    // made 'quick' look as slow as its cap's share of the spacing (4 jobs without a slot).
    await admittedWithHold(limiter, 'quick.test', 5);
    await admittedWithHold(limiter, 'long.test', 300);
    await f.addSeeds(Array.from({ length: 20 }, (_, i) => [`http://quick.test/${i}`, `http://long.test/${i}`]).flat());
    const before = Number((await redis.client().time())[0]) * 1000;
    // One URL per job: the slots themselves (jobs of several take them in turn, tested above).
    await f.release({ room: 1_000, readyTarget: 1_000, maxReadyPerGroup: 1_000, slowStart: false, maxUrlsPerJob: 1 });
    const jobs = await queue.getJobs(['prioritized']);
    const quickJobs = jobs.filter((job) => job.data.group === 'quick.test');
    const long = jobs.filter((job) => job.data.group === 'long.test');
    // The window (400 ms) holds about 8 slots 50 ms apart: more than the cap, each its own.
    // A slot that is now already carries none (the worker asks at once).
    expect(quickJobs.length).toBeGreaterThan(2);
    expect(quickJobs.length).toBeLessThanOrEqual(400 / 50 + 1);
    expect(quickJobs.filter((job) => job.data.due === undefined).length).toBeLessThanOrEqual(1);
    const quick = quickJobs.flatMap((job) => (job.data.due === undefined ? [] : [job.data.due])).sort((a, b) => a - b);
    expect(quick[0]).toBeGreaterThanOrEqual(before);
    for (let i = 1; i < quick.length; i += 1) expect(quick[i]! - quick[i - 1]!).toBeGreaterThanOrEqual(49);
    expect(quick.at(-1)! - before).toBeLessThanOrEqual(400 + 1_000);
    // The cap binds 'long': four jobs, asked for at once at the gate (no slot to wait for).
    expect(long).toHaveLength(4);
    expect(long.map((job) => job.data.due)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('releases a rate-bound group whose starts run behind its slots only as far ahead as the window allows, each job with the lag', async () => {
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: '*.test', rate: { max: 20, durationMs: 1_000 }, concurrency: 4 }] };
    const f = frontier({ scope: 'any' }, policy);
    const limiter = testPacer(redis.client(), namespace, policy);
    const probe = await limiter.acquire({ group: 'behind.test', leaseId: 'probe' });
    if (!probe.admitted) throw new Error('the probe was not admitted');
    await limiter.release(probe.lease, { sent: true, status: 200 });
    // As admissions record it: the group's starts run 300 ms behind the slots it was given.
    await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group('behind.test'), 'lagMs', '300');
    await f.addSeeds(Array.from({ length: 20 }, (_, i) => `http://behind.test/${i}`));
    await f.release({ room: 1_000, readyTarget: 1_000, maxReadyPerGroup: 1_000, slowStart: false, maxUrlsPerJob: 1 });
    const jobs = await queue.getJobs(['prioritized']);
    // The lag counts for half the window at most: only the slots within 400 - 200 ms, about 4 at 50 ms
    // apart, not 8; each job with a slot asks 200 ms after it (one whose slot is now asks at once).
    expect(jobs.length).toBeGreaterThanOrEqual(1);
    expect(jobs.length).toBeLessThanOrEqual(5);
    for (const job of jobs) if (job.data.due !== undefined) expect(job.data.lag).toBe(200);

    // A lag recorded long ago, with the group's pacing back at now, holds nothing back
    // (a lag above the window once kept a group from ever being released again).
    await redis.client().hset(limiterKeys(gateKeyPrefix(namespace)).group('behind.test'), 'lagMs', '900');
    for (const job of jobs) await job.remove();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await f.release({ room: 1_000, readyTarget: 1_000, maxReadyPerGroup: 1_000, slowStart: false, maxUrlsPerJob: 1 })).released).toBeGreaterThan(0);
    const [firstAgain] = (await queue.getJobs(['prioritized'])).sort((a, b) => (a.data.due ?? 0) - (b.data.due ?? 0));
    expect(firstAgain?.data.lag).toBeUndefined();
  });

  it('keeps no job waiting for a rate-limited group at its cap (the gate would send it back), one for a group without a rate', async () => {
    const policy = { defaults: { rate: null, concurrency: 1 }, rules: [{ match: 'paced.test', rate: { max: 100, durationMs: 1_000 } }] };
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds(['http://paced.test/1', 'http://paced.test/2', 'http://open.test/1', 'http://open.test/2']);
    const limiter = testPacer(redis.client(), namespace, policy);
    for (const group of ['paced.test', 'open.test']) expect((await limiter.acquire({ group, leaseId: `busy-${group}` })).admitted).toBe(true);
    await releaseAll(f);
    expect((await queue.getJobs(['prioritized'])).map((job) => job.data.url)).toEqual(['http://open.test/1']);
  });

  it("slow start: a group's first job goes alone, the rest once it is done (none waiting, none in flight)", async () => {
    const f = frontier({ scope: 'any' });
    await f.addSeeds(Array.from({ length: 6 }, (_, i) => `http://new.test/${i}`));
    expect((await f.release({ room: 100, readyTarget: 1_000 })).released).toBe(1);
    expect((await f.release({ room: 100, readyTarget: 1_000 })).released).toBe(0);
    // A worker takes it and fetches: a lease in flight still holds the rest back.
    const [probe] = await queue.getJobs(['prioritized']);
    await probe?.remove();
    const limiter = testPacer(redis.client(), namespace);
    const admission = await limiter.acquire({ group: 'new.test', leaseId: 'probe' });
    expect((await f.release({ room: 100, readyTarget: 1_000 })).released).toBe(0);
    if (admission.admitted) await limiter.release(admission.lease, { sent: true, status: 200 });
    expect((await f.release({ room: 100, readyTarget: 1_000 })).released).toBe(5);
  });

  it('takes groups in turns when a release has less room than the groups want', async () => {
    const f = frontier({ scope: 'any' });
    for (const host of ['a.test', 'b.test', 'c.test']) await f.addSeeds(Array.from({ length: 4 }, (_, i) => `http://${host}/${i}`));
    const served = new Set<string>();
    for (let call = 0; call < 3; call += 1) {
      await f.release({ room: 2, readyTarget: 1_000, slowStart: false });
      for (const job of await queue.getJobs(['prioritized'])) served.add(job.data.group);
    }
    expect([...served].sort()).toEqual(['a.test', 'b.test', 'c.test']);
  });

  it('holds at most maxReadyPerGroup waiting jobs for a group whose cap is higher', async () => {
    const f = frontier({ scope: 'any' });
    await f.addSeeds(Array.from({ length: 10 }, (_, i) => `http://wide.test/${i}`));
    expect((await f.release({ room: 100, readyTarget: 1_000, maxReadyPerGroup: 4, slowStart: false })).released).toBe(4);
    expect((await f.release({ room: 100, readyTarget: 1_000, maxReadyPerGroup: 4, slowStart: false })).released).toBe(0);
    // A worker takes two: two more may wait.
    for (const job of (await queue.getJobs(['prioritized'])).slice(0, 2)) await job.remove();
    expect((await f.release({ room: 100, readyTarget: 1_000, maxReadyPerGroup: 4, slowStart: false })).released).toBe(2);
  });

  it('says when more was ready to go than a group or the queue may hold (saturated), and not when its pace held it back', async () => {
    const policy = { defaults: { rate: null, concurrency: 1000 }, rules: [{ match: 'paced.test', rate: { max: 1, durationMs: 30_000 } }] };
    const f = frontier({ scope: 'any' }, policy);
    await f.addSeeds(Array.from({ length: 10 }, (_, i) => [`http://big.test/${i}`, `http://paced.test/${i}`]).flat());
    const options = { room: 100, readyTarget: 1_000, maxReadyPerGroup: 4, slowStart: false };
    expect(await f.release(options)).toMatchObject({ released: 5, saturated: true });
    // Nothing taken: 'big' still holds its 4, 'paced' waits 30 s for its next slot.
    expect(await f.release(options)).toMatchObject({ released: 0, saturated: true });
    for (const job of await queue.getJobs(['prioritized'])) if (job.data.group === 'big.test') await job.remove();
    expect(await f.release({ ...options, maxReadyPerGroup: 100 })).toMatchObject({ released: 6, saturated: false });
  });

  it('releases no more than the queue has room for (readyTarget), whoever released the waiting jobs', async () => {
    const f = frontier({ scope: 'any' });
    await f.addSeeds(Array.from({ length: 30 }, (_, i) => `http://h${i % 3}.test/${i}`));
    // Room is counted in jobs: 30 URLs over a target of 12 go two to a job.
    expect(await f.release({ room: 100, readyTarget: 12, slowStart: false })).toMatchObject({ jobs: 12, released: 24 });
    expect((await frontier({ scope: 'any' }).release({ room: 100, readyTarget: 12, slowStart: false })).released).toBe(0);
    expect(await queue.count()).toBe(12);
  });

  it('counts the processes that release on a loop, so that they can share one pace', async () => {
    const options = { room: 10, readyTarget: 1_000 };
    expect((await frontier().release(options)).releasers).toBe(1);
    expect((await frontier().release({ ...options, releaser: 'worker-a' })).releasers).toBe(1);
    expect((await frontier().release({ ...options, releaser: 'worker-b' })).releasers).toBe(2);
    expect((await frontier().release({ ...options, releaser: 'worker-a' })).releasers).toBe(2);
    // A call that names no releaser is not one of them.
    expect((await frontier().release(options)).releasers).toBe(1);
  });

  it('never releases a URL twice, however many processes release at once', async () => {
    const f = frontier({ scope: 'any' });
    await f.addSeeds(Array.from({ length: 300 }, (_, i) => `http://h${i % 7}.test/${i}`));
    const releasers = Array.from({ length: 5 }, () => frontier({ scope: 'any' }));
    const counts = await Promise.all(releasers.map((r) => releaseAll(r)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(300);
    const jobs = await queue.getJobs(['prioritized']);
    expect(new Set(jobs.map((job) => job.data.url)).size).toBe(300);
    expect(await f.backlogSize()).toBe(0);
  });

  it('keeps discovered links within host scope and depth', async () => {
    const f = frontier();
    await f.addSeeds(['http://a.test/']);
    const found = await f.addDiscovered(['http://a.test/1', '/2', 'http://other.test/', 'mailto:x@y'], 0);
    // Relative links must be absolute by now (the extractor resolves them).
    expect(found.accepted).toBe(1);
    expect(found.outOfScope).toBe(1);
    expect(found.rejected).toHaveLength(2);
    // The links as the crawl sees them (a page's link set): normalised and in scope, admitted or not.
    const again = await f.addDiscovered(['HTTP://A.test/1#top', 'http://a.test/3', 'http://other.test/'], 0);
    expect(again).toMatchObject({ accepted: 1, duplicate: 1, scopedUrls: ['http://a.test/1', 'http://a.test/3'] });
    const deep = await f.addDiscovered(['http://a.test/deep'], 2);
    expect(deep).toMatchObject({ accepted: 0, tooDeep: 1, scopedUrls: [] });
    await releaseAll(f);
    const job = (await queue.getJobs(['waiting', 'prioritized'])).find((j) => j.data.url === 'http://a.test/1');
    expect(job?.data).toEqual({ url: 'http://a.test/1', depth: 1, group: 'a.test' });
  });

  it('shares the scope with another frontier instance (another worker)', async () => {
    await frontier().addSeeds(['http://a.test/']);
    const worker = frontier();
    expect((await worker.addDiscovered(['http://a.test/p', 'http://z.test/'], 0)).accepted).toBe(1);
  });

  it('stops at --max-pages and --max-pages-per-group', async () => {
    const f = frontier({ maxPages: 3, maxPagesPerGroup: 2, scope: 'any' });
    const result = await f.addSeeds(['http://a.test/1', 'http://a.test/2', 'http://a.test/3', 'http://b.test/1', 'http://c.test/1']);
    expect(result.accepted).toBe(3);
    expect(result.overLimit).toBe(2);
    expect(await queuedUrls()).toEqual(['http://a.test/1', 'http://a.test/2', 'http://b.test/1']);
  });
});

describe('readCrawlProgress', () => {
  it('counts the backlog and the queue by state in one read; a delayed job counts as due only within the window', async () => {
    const f = frontier();
    await f.addSeeds(['http://a.test/1', 'http://a.test/2', 'http://b.test/']);
    const options = { attempts: 1 };
    await queue.add('fetch', { url: 'http://c.test/', depth: 0, group: 'c.test' }, options);
    await queue.add('fetch', { url: 'http://c.test/p', depth: 1, group: 'c.test' }, { ...options, priority: 2 });
    await queue.add('fetch', { url: 'http://c.test/soon', depth: 1, group: 'c.test' }, { ...options, delay: 5_000 });
    await queue.add('fetch', { url: 'http://c.test/late', depth: 1, group: 'c.test' }, { ...options, delay: 600_000 });
    expect(await readCrawlProgress(redis.client(), namespace, { dueWithinMs: 60_000 })).toEqual({
      backlog: 3,
      waiting: 2,
      delayed: 2,
      delayedDue: 1,
      active: 0,
      failed: 0,
      // The three seeds marked seen; the jobs added straight to the queue were not.
      seen: 3,
    });
    expect((await readCrawlProgress(redis.client(), namespace, { dueWithinMs: 3_600_000 })).delayedDue).toBe(2);
  });
});

describe('enqueueLines', () => {
  it('streams lines in batches and reports rejected line numbers', async () => {
    const lines = ['http://a.test/1', 'not a url', 'http://a.test/1', '', 'http://a.test/2'];
    const source = createInterface({ input: Readable.from([lines.join('\n')]) });
    const rejectedLines: number[] = [];
    const totals = await enqueueLines(frontier(), source, { batchSize: 2, onRejected: (line) => rejectedLines.push(line) });
    expect(totals).toMatchObject({ accepted: 2, duplicate: 1, rejected: 2, lines: 5 });
    expect(rejectedLines).toEqual([2, 4]);
  });
});

describe('custom group rules', () => {
  it('puts hosts matching a rule in the named group, first match wins, others by host', async () => {
    const f = frontier({
      scope: 'any',
      groupRules: [
        { match: '*.cdn.test', group: 'shared-cdn' },
        { match: '*.test', group: 'never-reached-for-cdn' },
      ],
    });
    await f.addSeeds(['http://a.cdn.test/1', 'http://b.cdn.test/2', 'http://plain.example/3']);
    await releaseAll(f);
    const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    const groups = Object.fromEntries(jobs.map((job) => [job.data.url, job.data.group]));
    expect(groups).toEqual({
      'http://a.cdn.test/1': 'shared-cdn',
      'http://b.cdn.test/2': 'shared-cdn',
      'http://plain.example/3': 'plain.example',
    });
    expect(f.groupOf('http://x.cdn.test/')).toBe('shared-cdn');
  });
});
