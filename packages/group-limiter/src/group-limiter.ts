import { randomUUID } from 'node:crypto';
import type { LuaArg, LuaScript } from '@crawlq/redis';
import type { Admission, Lease, Outcome, PaceChange, RetakenStart, StartCheck } from './admission.js';
import { acquireArgs, acquireScript, foldedReleasesArgs, type FoldedReleases } from './lua/acquire.js';
import { writeReleasesScript } from './lua/write-releases.js';
import { confirmStartScript } from './lua/confirm-start.js';
import { retakeStartScript } from './lua/retake-start.js';
import { pauseScript } from './lua/pause.js';
import { readStatusScript, STATUS_FIELDS } from './lua/read-status.js';
import { releaseArgs, releaseScript } from './lua/release.js';
import { resumeScript } from './lua/resume.js';
import { ScriptCode } from './lua/script-code.js';
import { setMinIntervalScript } from './lua/set-min-interval.js';
import { setPolicyScript } from './lua/set-policy.js';
import { slipScript } from './lua/slip.js';
import {
  GroupLimiterArgumentError,
  GroupLimiterRedisError,
  InvalidLimitPolicyError,
  PolicyVersionRaceError,
} from './errors.js';
import type { GlobalStatus, GroupStatus } from './group-status.js';
import { limiterKeys, type LimiterKeys } from './keys.js';
import {
  DEFAULT_ADAPTIVE_PACING,
  DEFAULT_LIMIT_POLICY,
  DEFAULT_MAX_MIN_INTERVAL_MS,
  normalizePolicy,
  type AdaptivePacing,
  type GroupLimits,
  type LimitPolicy,
  type LimitPolicyInput,
} from './policy.js';
import { RedisClock } from './redis-clock.js';
import { resolveLimits, type ResolvedLimits } from './resolve-limits.js';
import { ServerLevel, serverKeys, type ServerKeys } from './server-level.js';
import { readServerStatuses, type ServerStatus } from './server-status.js';
import type { RedisClient } from '@crawlq/redis';

/** Options for `createGroupLimiter`. */
export interface GroupLimiterOptions {
  /** A connection the limiter may share; it only runs scripts (EVALSHA) and SMEMBERS/HMGET on it. */
  readonly redis: RedisClient;
  /** Start of every key. Use one hash tag per crawl (`crawlq:{crawl}`) so the keys share a Redis Cluster slot. */
  readonly prefix: string;
  /**
   * Policy used while none is stored in Redis; once `setPolicy` has stored one, the stored one wins.
   * @default DEFAULT_LIMIT_POLICY
   */
  readonly policy?: LimitPolicyInput;
  /**
   * Which of the crawl's shards this limiter is. A shard's scripts see only
   * its own keys, so the crawl-wide rate (`globalRate`, MAX per DURATION) is
   * split into whole shares: shard i may start `globalShare(MAX, i, count)`
   * per DURATION (MAX / count, the remainder to the first shards), and
   * together they never exceed MAX in any window. MAX below the count leaves
   * a shard no share: the configuration refuses that.
   * @default { index: 0, count: 1 }
   */
  readonly shard?: { readonly index: number; readonly count: number };
}

/** A request to start one fetch for a group. */
export interface AcquireRequest {
  /** Host or registrable domain, computed by the caller. */
  readonly group: string;
  /** Unique per attempt (e.g. job id + attempt); identifies the concurrency lease. */
  readonly leaseId: string;
  /**
   * Admit with a reserved start up to this far in the future (the caller sleeps `startInMs`)
   * rather than denying: cheaper than a queue deferral for small pacing waits.
   * @default 0
   */
  readonly maxInlineWaitMs?: number;
  /**
   * The start slot the release step gave the job (Redis clock, `CrawlJobData.due`):
   * the admission records how far the group's starts run behind such slots.
   */
  readonly slot?: number | undefined;
  /**
   * A job of several URLs moving on to its URL number `value` (0-based; those
   * before it are done): recorded in the job's hash (`jobKey`, BullMQ's
   * `progress` field) by the same script, so a worker killed mid-job leaves
   * the next one to start where it was. The key must share the group's hash slot.
   */
  readonly progress?: { readonly jobKey: string; readonly value: number } | undefined;
  /**
   * The address the request's connection goes to (as resolved for it): its
   * server (the policy's `servers`: the address, IPv6 by its /64) must admit
   * the start too, in the same script. Unset: the group's gate only.
   */
  readonly address?: string | undefined;
  /**
   * How late this process's starts have lately run past their slots (a busy
   * event loop): a start that keeps a spacing moves its group's pacing (and
   * its server's) back by that much more, at most a quarter of the interval,
   * and `startBy` with it, so it may go that late without a retake's round
   * trip. Only ever slows the group. Ignored under a crawl-wide cap.
   * @default 0
   */
  readonly graceMs?: number | undefined;
}

/** What a `runPaced` caller adds: its operation's name (for errors), and its own keys and arguments. */
export interface PacedCall {
  readonly operation: string;
  readonly keys: readonly string[];
  readonly args: readonly LuaArg[];
}

/** What `setPolicy` replaced. */
export interface SetPolicyResult {
  /** False when the stored policy was already identical. */
  readonly changed: boolean;
  /** The policy stored before, or `null` if none was. */
  readonly previous: LimitPolicy | null;
}

/** Per-group politeness (rate, concurrency, pause) shared by every worker through Redis. */
export interface GroupLimiter {
  /** Just before a start whose admission says `confirmBeforeStart`: go, or why not (the lease is then given back). */
  confirmStart(lease: Lease): Promise<StartCheck>;
  /** Writes the fleet-wide policy; every limiter switches to it at its next script call. */
  setPolicy(policy: LimitPolicyInput): Promise<SetPolicyResult>;
  /** The policy stored in Redis (also refreshes this limiter's cache), or `null` if none is. */
  getPolicy(): Promise<LimitPolicy | null>;
  /** The limits for `group` under the cached policy. */
  limitsFor(group: string): GroupLimits;
  /** Asks to start one request now; one round trip. */
  acquire(request: AcquireRequest): Promise<Admission>;
  /**
   * This process's `performance.now()` at a time on the Redis clock that
   * holds `group`'s state, once an admission's reply showed the offset
   * (undefined before). No round trip.
   */
  localTimeOf(group: string, redisMs: number): number | undefined;
  /**
   * Gives the concurrency slot back (idempotent) and reports the outcome; one
   * round trip. An invalid outcome still gives the slot back (without the
   * outcome), then rejects with GroupLimiterArgumentError. Resolves with the
   * change to the group's adaptive pace this outcome made (a cut, or the
   * first report of being back at full pace), or `null`.
   */
  release(lease: Lease, outcome?: Outcome): Promise<PaceChange | null>;
  /**
   * Writes what this limiter's releases left to write: a release with nothing
   * to report but the end of its request only removes its lease, and its hold
   * time and request count go with the process's next admission of the group,
   * or here (on a one-second beat, before a status read, and when its process
   * closes: call it before closing the connection).
   */
  flush(): Promise<void>;
  /** Gives back an admission that was not used because its start came past `startBy`; counted in `lateStarts`. */
  abandon(lease: Lease): Promise<void>;
  /**
   * An admission whose start came past `startBy`: starts it now instead, when
   * no later start of the group was admitted, nor of its server when the
   * server's level admitted it too (their pacing moves back by the lateness;
   * counted in `slippedStarts`). Otherwise gives it back like `abandon` and
   * resolves `null`. One round trip.
   * `graceMs` (default 0) moves the pacing back by that much more, and the
   * retaken start's `startBy` with it: a caller whose event loop is slow may
   * go that much later still without crowding the next start.
   */
  retakeLateStart(lease: Lease, graceMs?: number): Promise<RetakenStart | null>;
  /**
   * Reports a start that went out `lateMs` past its `startBy` anyway (the
   * process stalled after the check): the group's next reservations move back
   * by that much, and so do those of `server` (the lease's `server`, when its
   * level admitted the start too), so no window as the server counts it gets
   * one start too many. Counted in `slippedStarts`.
   */
  reportSlip(group: string, lateMs: number, server?: string): Promise<void>;
  /**
   * Runs another package's script over `groups` with this limiter's pacing
   * state laid out as `lua/paced-groups.lua` describes, the caller's keys and
   * arguments after it: how the frontier releases a group's backlog no faster
   * than the gate admits it, in the same atomic step. Reloads a stale policy
   * and runs again, like the limiter's own scripts. Returns the reply after
   * its status element (ScriptCode.Ok).
   */
  runPaced(script: LuaScript, groups: readonly string[], call: PacedCall): Promise<unknown[]>;
  /** Pauses a group for `forMs` (capped by `maxPauseMs`), replacing any current pause. */
  pause(group: string, forMs: number, reason?: string): Promise<void>;
  /** Ends a pause and forgets the 429 strikes. */
  resume(group: string): Promise<void>;
  /**
   * Sets a group's own minimum interval between request starts, e.g. from its
   * robots.txt `Crawl-delay`. acquire() and the release step then space the group's starts
   * by max(policy interval, this), capped by the policy's `maxMinIntervalMs`,
   * without burst when this is the longer one: it only ever slows a group down.
   * 0 removes it. Fleet-wide, like every limiter state.
   */
  setMinInterval(group: string, ms: number): Promise<void>;
  /** One group's state. */
  status(group: string): Promise<GroupStatus>;
  /** Every group seen under this prefix, sorted by name. */
  list(): Promise<GroupStatus[]>;
  /** The crawl-wide cap in force (the stored policy's) and its counters. */
  globalStatus(): Promise<GlobalStatus>;
  /** Every server the server level admitted a start for, sorted by name (refreshes the policy first). */
  servers(): Promise<ServerStatus[]>;
}

/** The weight an old hold time keeps against a new sample (the release script's moving average). */
const HOLD_KEEP = 0.8;
/** How often a limiter writes what its releases left to write, for groups it admits nothing of meanwhile. */
const FLUSH_EVERY_MS = 1_000;
/** Version a limiter assumes while no policy is stored. */
const NO_POLICY_VERSION = '0';
/** Spacing of deferrals for groups without a rate limit (paused or concurrency-bound). */
const MIN_STEP_MS = 10;
const MAX_JITTER_MS = 20;
/** A stale answer normally costs one reload and one retry; more means the policy is churning. */
const MAX_ATTEMPTS = 3;
/** Bounds memory in broad crawls with millions of hosts. */
const LIMITS_CACHE_SIZE = 10_000;
/**
 * Starts nearer than this are checked once, at admission: no pause re-check
 * (the wait is within the safety margin), and the concurrency cap counts them
 * from admission. Further ones are confirmed when they come.
 */
const CONFIRM_AFTER_WAIT_MS = 50;
/** Floor of the late-start allowance, so that a zero safety margin cannot make every start late. */
const MIN_LATE_ALLOWANCE_MS = 5;
const STATUS_CHUNK = 500;

/** Creates a limiter on an existing connection; cheap, no I/O until the first call. */
export function createGroupLimiter(options: GroupLimiterOptions): GroupLimiter {
  return new RedisGroupLimiter(options);
}

class RedisGroupLimiter implements GroupLimiter {
  readonly #redis: RedisClient;
  readonly #keys: LimiterKeys;
  readonly #localPolicy: LimitPolicy;
  #policy: LimitPolicy;
  #version = NO_POLICY_VERSION;
  readonly #limits = new Map<string, ResolvedLimits>();
  readonly #clock = new RedisClock();
  /**
   * Per group, what this process's releases of it left to write (see
   * #release), until its next admission or flush writes it, and since when
   * (performance.now() of the first of them).
   */
  readonly #unwritten = new Map<string, { readonly released: FoldedReleases; readonly since: number }>();
  /**
   * Groups whose last admission here said their releases need not run the
   * script: no 429 strikes to reset, and a hold time already (the release
   * step plans a group's jobs by it, so the first is written at once). Any
   * other group's releases run it. At most LIMITS_CACHE_SIZE, the oldest
   * forgotten first (a crawl of millions of hosts): a forgotten group only
   * runs the script again until its next admission here.
   */
  readonly #quietReleases = new Set<string>();
  #flushBeat: NodeJS.Timeout | undefined;
  readonly #shard: { readonly index: number; readonly count: number };
  readonly #serverKeys: ServerKeys;
  #serverLevel: ServerLevel;
  #reloading: Promise<LimitPolicy | null> | undefined;
  /** The stored policy was read (or set) at least once: see #release. */
  #policyKnown = false;

  constructor(options: GroupLimiterOptions) {
    if (typeof options.prefix !== 'string' || options.prefix.length === 0) {
      throw new GroupLimiterArgumentError('prefix must be a non-empty string', { operation: 'createGroupLimiter', argument: 'prefix' });
    }
    this.#redis = options.redis;
    this.#keys = limiterKeys(options.prefix);
    this.#localPolicy = options.policy ? normalizePolicy(options.policy, 'createGroupLimiter') : DEFAULT_LIMIT_POLICY;
    this.#policy = this.#localPolicy;
    const shard = options.shard ?? { index: 0, count: 1 };
    if (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count) {
      throw new GroupLimiterArgumentError(`shard must be { index, count } with 0 <= index < count, got ${JSON.stringify(shard)}`, { operation: 'createGroupLimiter', argument: 'shard' });
    }
    this.#shard = shard;
    this.#serverKeys = serverKeys(options.prefix);
    this.#serverLevel = new ServerLevel(this.#policy, this.#serverKeys, shard);
  }

  async setPolicy(input: LimitPolicyInput): Promise<SetPolicyResult> {
    const policy = normalizePolicy(input, 'setPolicy');
    const reply = await this.#call('setPolicy', setPolicyScript, () => ({
      keys: [this.#keys.policy],
      args: [JSON.stringify(policy), randomUUID().slice(0, 8)],
    }));
    const previousJson = asString(reply[1]);
    this.#usePolicy(policy, asString(reply[2]) ?? NO_POLICY_VERSION);
    return {
      changed: reply[0] === ScriptCode.Ok,
      previous: previousJson ? parseStoredPolicy(previousJson, 'setPolicy') : null,
    };
  }

  getPolicy(): Promise<LimitPolicy | null> {
    return this.#reload('getPolicy');
  }

  limitsFor(group: string): GroupLimits {
    return this.#resolved(group).limits;
  }

  async acquire(request: AcquireRequest): Promise<Admission> {
    const { group, leaseId } = request;
    checkName(group, 'group', 'acquire');
    checkName(leaseId, 'leaseId', 'acquire');
    const maxInlineWaitMs = request.maxInlineWaitMs ?? 0;
    checkDuration(maxInlineWaitMs, 'maxInlineWaitMs', 'acquire');
    checkDuration(request.graceMs ?? 0, 'graceMs', 'acquire');
    // A bad address is the caller's mistake, said before any round trip.
    this.#serverCall(request.address);
    let sentAt = 0;
    let server: ReturnType<ServerLevel['call']> | undefined;
    // Taken now, so two admissions of the group at once do not both write them; put back unless written.
    const released = this.#takeUnwritten(group);
    let reply: unknown[];
    try {
      reply = await this.#acquireCall({ request, maxInlineWaitMs, released }, (at, level) => {
        sentAt = at;
        server = level;
      });
    } catch (error) {
      this.#restore(group, released);
      throw error;
    }
    const receivedAt = performance.now();
    const code = reply[0];
    if (code !== ScriptCode.Ok) this.#restore(group, released);
    else if (asNumber(reply[8] ?? 0) !== 0) this.#quietReleases.delete(group);
    else if (!this.#quietReleases.has(group)) {
      if (this.#quietReleases.size >= LIMITS_CACHE_SIZE) this.#quietReleases.delete(this.#quietReleases.values().next().value ?? '');
      this.#quietReleases.add(group);
    }
    return this.#admission(request, { reply, sentAt, receivedAt, server });
  }

  #acquireCall(
    { request, maxInlineWaitMs, released }: { request: AcquireRequest; maxInlineWaitMs: number; released: FoldedReleases | undefined },
    onSend: (sentAt: number, server: ReturnType<ServerLevel['call']>) => void,
  ): Promise<unknown[]> {
    const { group, leaseId } = request;
    return this.#call('acquire', acquireScript, () => {
      const server = this.#serverCall(request.address);
      onSend(performance.now(), server);
      const limits = this.#resolved(group);
      return {
        keys: [this.#keys.policy, this.#keys.group(group), this.#keys.leases(group), this.#keys.groups, this.#keys.global, request.progress?.jobKey ?? this.#keys.group(group), ...server.keys],
        args: acquireArgs({
          policyVersion: this.#version,
          group,
          leaseId,
          maxInlineWaitMs,
          intervalMs: limits.intervalMs,
          toleranceMs: limits.toleranceMs,
          concurrency: limits.concurrency,
          leaseMs: this.#policy.leaseMs,
          minStepMs: MIN_STEP_MS,
          maxMinIntervalMs: this.#maxMinIntervalMs,
          nearMs: CONFIRM_AFTER_WAIT_MS,
          globalIntervalMs: this.#globalIntervalMs,
          adaptive: limits.adaptive,
          adaptiveFloor: this.#adaptive.floor,
          adaptiveRisePerSecond: this.#adaptive.risePerSecond,
          slot: request.slot,
          progress: request.progress?.value,
          server: server.args,
          graceMs: request.graceMs ?? 0,
          released,
        }),
      };
    });
  }

  #admission(request: AcquireRequest, answer: { reply: unknown[]; sentAt: number; receivedAt: number; server: ReturnType<ServerLevel['call']> | undefined }): Admission {
    const { group, leaseId } = request;
    const { reply, sentAt, receivedAt, server } = answer;
    const code = reply[0];
    if (code === ScriptCode.Ok) {
      const startInMs = asNumber(reply[1]);
      const startAt = asNumber(reply[2]);
      this.#clock.observe(sentAt, receivedAt, asNumber(reply[3]));
      const spacingMs = asNumber(reply[5] ?? 0);
      // Lateness matters only where some spacing is kept: the group's (its
      // rate, Crawl-delay, adaptive pace: the script's own figure), the
      // crawl-wide cap's, or the server's. Without any, a start that goes late
      // crowds no one (the concurrency cap counts leases, not times), so it
      // has no deadline: no retake, no give-back, no slip report.
      const spaced = spacingMs > 0 || this.#globalIntervalMs > 0 || Number(server?.args[1] ?? 0) > 0;
      const start = this.#localStart(group, startAt, receivedAt + startInMs);
      return {
        admitted: true,
        startInMs,
        startAt,
        localStartAt: start.localStartAt,
        startBy: start.startBy + asNumber(reply[6] ?? 0),
        ...(spaced ? {} : { startBy: Number.POSITIVE_INFINITY }),
        confirmBeforeStart: asNumber(reply[4]) === 1,
        ...(spacingMs > 0 ? { nextStartAt: asNumber(reply[7] ?? 0) } : {}),
        lease: { group, leaseId, admittedAt: asNumber(reply[3]), startAt, ...(server?.server === undefined ? {} : { server: server.server, serverLateMs: server.lateMs, ...(server.capped ? { serverConcurrency: Number(server.args[2]) } : {}) }) },
      };
    }
    const wakeInMs = asNumber(reply[1]);
    const stepMs = asNumber(reply[3]);
    // Jitter below a quarter step keeps the slots distinct and in order.
    const retryInMs = wakeInMs + Math.floor(Math.random() * Math.min(MAX_JITTER_MS, stepMs / 4));
    switch (code) {
      case ScriptCode.DeniedPaused:
        return { admitted: false, retryInMs, reason: 'paused', pausedForMs: asNumber(reply[2]) };
      case ScriptCode.DeniedConcurrency:
        return { admitted: false, retryInMs, reason: 'concurrency' };
      case ScriptCode.DeniedRate:
        return { admitted: false, retryInMs, reason: 'rate' };
      case ScriptCode.DeniedGlobalRate:
        return { admitted: false, retryInMs, reason: 'global-rate' };
      case ScriptCode.DeniedServerRate:
        return { admitted: false, retryInMs, reason: 'server-rate' };
      case ScriptCode.DeniedServerConcurrency:
        return { admitted: false, retryInMs, reason: 'server-concurrency' };
      default:
        throw unexpectedReply('acquire', reply);
    }
  }

  /** The server level's keys and arguments for `address` (none without one, or with no server limits). */
  #serverCall(address: string | undefined): ReturnType<ServerLevel['call']> {
    try {
      return this.#serverLevel.call(address, this.#keys.policy, MIN_LATE_ALLOWANCE_MS);
    } catch {
      throw new GroupLimiterArgumentError(`address must be an IP address, got ${JSON.stringify(String(address).slice(0, 100))}`, { operation: 'acquire', argument: 'address' });
    }
  }

  /** A server concurrency slot goes back with its lease (ZREM is idempotent, like release). */
  async #releaseServer(lease: Lease): Promise<void> {
    if (lease.server === undefined || lease.serverConcurrency === undefined) return;
    await this.#redis.zrem(this.#serverKeys.leases(lease.server), lease.leaseId).catch(() => undefined);
  }

  localTimeOf(_group: string, redisMs: number): number | undefined {
    return this.#clock.toLocal(redisMs);
  }

  async retakeLateStart(lease: Lease, graceMs = 0): Promise<RetakenStart | null> {
    checkName(lease.group, 'group', 'retakeLateStart');
    checkName(lease.leaseId, 'leaseId', 'retakeLateStart');
    checkDuration(graceMs, 'graceMs', 'retakeLateStart');
    let reply: unknown;
    try {
      const group = this.#keys.group(lease.group);
      const server = lease.server;
      reply = await this.#runScript(retakeStartScript, {
        keys: [group, this.#keys.leases(lease.group), server === undefined ? group : this.#serverKeys.server(server), server === undefined ? group : this.#serverKeys.leases(server)],
        args: [lease.leaseId, this.#policy.leaseMs, this.#globalIntervalMs, server ?? '', lease.serverLateMs ?? 0, graceMs],
      });
    } catch (error) {
      throw redisFailure('retakeLateStart', error);
    }
    if (!Array.isArray(reply) || reply.length === 0) throw unexpectedReply('retakeLateStart', reply);
    if (reply[0] === ScriptCode.DeniedRate) {
      await this.#releaseServer(lease);
      return null;
    }
    if (reply[0] !== ScriptCode.Ok) throw unexpectedReply('retakeLateStart', reply);
    const startAt = asNumber(reply[1]);
    const start = this.#localStart(lease.group, startAt, performance.now());
    return { startAt, localStartAt: start.localStartAt, startBy: start.startBy + graceMs };
  }

  async abandon(lease: Lease): Promise<void> {
    checkName(lease.group, 'group', 'abandon');
    checkName(lease.leaseId, 'leaseId', 'abandon');
    const server = this.#releaseServer(lease);
    await this.#call('abandon', releaseScript, () => ({
      keys: [this.#keys.policy, this.#keys.group(lease.group), this.#keys.leases(lease.group)],
      args: [this.#version, lease.leaseId, '', '', this.#policy.leaseMs, 0, 0, 0, '1', '0'],
    }));
    await server;
  }

  async reportSlip(group: string, lateMs: number, server?: string): Promise<void> {
    checkName(group, 'group', 'reportSlip');
    checkDuration(lateMs, 'lateMs', 'reportSlip');
    try {
      const key = this.#keys.group(group);
      // The crawl-wide pacing moves too only while a cap is in force (a read less per slip without one).
      const global = this.#globalIntervalMs > 0 ? this.#keys.global : key;
      await this.#runScript(slipScript, { keys: [key, global, server === undefined ? key : this.#serverKeys.server(server)], args: [lateMs, server ?? ''] });
    } catch (error) {
      throw redisFailure('reportSlip', error);
    }
  }

  async release(lease: Lease, outcome: Outcome = {}): Promise<PaceChange | null> {
    checkName(lease.group, 'group', 'release');
    checkName(lease.leaseId, 'leaseId', 'release');
    // An outcome it cannot take (a `000` status line, a negative Retry-After)
    // must not cost the slot until the lease expires: the slot goes
    // back without it, then the bad argument is reported.
    const invalid = invalidOutcome(outcome);
    if (invalid) {
      await this.#release(lease, { ...(outcome.sent === undefined ? {} : { sent: outcome.sent }) });
      throw invalid;
    }
    return this.#release(lease, outcome);
  }

  async #release(lease: Lease, outcome: Outcome): Promise<PaceChange | null> {
    // The release script does not check the policy's version (a command on
    // every request): a release may use the policy of this limiter's last
    // call, but never the built-in one of a limiter that has read none yet.
    if (!this.#policyKnown) await this.#reload('release');
    // The server's slot goes back in parallel: its own round trip, only for a server with a concurrency cap.
    const server = this.#releaseServer(lease);
    const nowMs = this.#clock.toRedis(performance.now());
    if (nowMs !== undefined && lease.startAt !== undefined && this.#onlyEnds(lease.group, outcome)) {
      await Promise.all([this.#endLease(lease, { nowMs, startAt: lease.startAt, sent: outcome.sent === true }), server]);
      return null;
    }
    const reply = await this.#call('release', releaseScript, () => {
      const adaptive = this.#adaptive;
      return {
        keys: [this.#keys.policy, this.#keys.group(lease.group), this.#keys.leases(lease.group)],
        args: releaseArgs({
          policyVersion: this.#version,
          leaseId: lease.leaseId,
          status: outcome.status,
          retryAfterMs: outcome.retryAfterMs,
          leaseMs: this.#policy.leaseMs,
          backoffBaseMs: this.#policy.backoff429.baseMs,
          backoffMaxMs: this.#policy.backoff429.maxMs,
          maxPauseMs: this.#policy.maxPauseMs,
          abandoned: false,
          sent: outcome.sent === true,
          latencyMs: outcome.latencyMs,
          failure: outcome.failure,
          adaptive: this.#resolved(lease.group).adaptive,
          adaptiveFloor: adaptive.floor,
          adaptiveRisePerSecond: adaptive.risePerSecond,
          latencyTolerance: adaptive.latencyTolerance,
          latencySlackMs: adaptive.latencySlackMs,
          admittedAt: lease.admittedAt,
          startAt: lease.startAt,
        }),
      };
    });
    await server;
    return paceChangeOf(lease.group, reply);
  }

  /**
   * A release that reports nothing but the end of its request: a status that
   * pauses nothing (no 429, no 503), no failure, a group that does not adapt
   * and that its last admission here said so of (see #quietReleases).
   */
  #onlyEnds(group: string, outcome: Outcome): boolean {
    return outcome.status !== 429 && outcome.status !== 503 && outcome.failure === undefined && this.#quietReleases.has(group) && !this.#resolved(group).adaptive;
  }

  /**
   * Removes the lease, one command and no script; the hold time it measured
   * (on this process's estimate of Redis' clock) and its request are folded
   * into what the group's next admission here, or a flush, writes.
   */
  async #endLease(lease: Lease, end: { nowMs: number; startAt: number; sent: boolean }): Promise<void> {
    let removed: number;
    try {
      removed = await this.#redis.zrem(this.#keys.leases(lease.group), lease.leaseId);
    } catch (error) {
      throw redisFailure('release', error);
    }
    if (removed !== 1) return;
    const held = end.nowMs - end.startAt;
    const sample = held >= 0 && held <= this.#policy.leaseMs ? held : undefined;
    this.#putBack(lease.group, {
      // A sample moves the average as the release script's does: 0.2 of it, 0.8 of the old.
      holdDecay: sample === undefined ? 1 : HOLD_KEEP,
      holdAddend: sample === undefined ? 0 : (1 - HOLD_KEEP) * sample,
      ...(sample === undefined ? {} : { lastHoldMs: sample }),
      sent: end.sent ? 1 : 0,
    });
    this.#flushBeat ??= setInterval(() => void this.#flushOld().catch(() => undefined), FLUSH_EVERY_MS).unref();
  }

  #takeUnwritten(group: string): FoldedReleases | undefined {
    const unwritten = this.#unwritten.get(group);
    this.#unwritten.delete(group);
    return unwritten?.released;
  }

  /** Puts back what was taken to be written and was not, before the releases recorded since. */
  #restore(group: string, taken: FoldedReleases | undefined): void {
    const since = this.#takeUnwritten(group);
    this.#putBack(group, taken);
    this.#putBack(group, since);
  }

  /** Adds `later` (releases after those unwritten already) to what the group has unwritten. */
  #putBack(group: string, later: FoldedReleases | undefined): void {
    if (later === undefined) return;
    const unwritten = this.#unwritten.get(group);
    if (unwritten === undefined) {
      this.#unwritten.set(group, { released: later, since: performance.now() });
      return;
    }
    const earlier = unwritten.released;
    this.#unwritten.set(group, {
      released: {
        holdDecay: earlier.holdDecay * later.holdDecay,
        holdAddend: earlier.holdAddend * later.holdDecay + later.holdAddend,
        ...((later.lastHoldMs ?? earlier.lastHoldMs) === undefined ? {} : { lastHoldMs: later.lastHoldMs ?? earlier.lastHoldMs }),
        sent: earlier.sent + later.sent,
      },
      since: unwritten.since,
    });
  }

  flush(): Promise<void> {
    return this.#write([...this.#unwritten.keys()]);
  }

  /** The beat's flush: only groups left unwritten a whole beat (one admitted meanwhile had them written with it). */
  #flushOld(): Promise<void> {
    const before = performance.now() - FLUSH_EVERY_MS;
    return this.#write([...this.#unwritten].filter(([, { since }]) => since <= before).map(([group]) => group));
  }

  async #write(groups: readonly string[]): Promise<void> {
    if (this.#unwritten.size === 0 && this.#flushBeat !== undefined) {
      // Nothing left: the beat stops until a release leaves something again.
      clearInterval(this.#flushBeat);
      this.#flushBeat = undefined;
    }
    const taken = groups.flatMap((group) => {
      const released = this.#takeUnwritten(group);
      return released === undefined ? [] : [[group, released] as const];
    });
    for (let start = 0; start < taken.length; start += STATUS_CHUNK) {
      const chunk = taken.slice(start, start + STATUS_CHUNK);
      try {
        await this.#runScript(writeReleasesScript, { keys: chunk.map(([group]) => this.#keys.group(group)), args: chunk.flatMap(([, released]) => foldedReleasesArgs(released)) });
      } catch (error) {
        // Kept for the next beat; releases since then come after them.
        for (const [group, released] of taken.slice(start)) this.#restore(group, released);
        throw redisFailure('flush', error);
      }
    }
  }

  async runPaced(script: LuaScript, groups: readonly string[], call: PacedCall): Promise<unknown[]> {
    const { operation, keys, args } = call;
    groups.forEach((group) => checkName(group, 'groups[]', operation));
    const reply = await this.#call(operation, script, () => ({
      keys: [
        this.#keys.policy,
        this.#keys.groups,
        ...groups.map((group) => this.#keys.group(group)),
        ...groups.map((group) => this.#keys.leases(group)),
        ...keys,
      ],
      args: [
        this.#version,
        groups.length,
        MIN_STEP_MS,
        this.#maxMinIntervalMs,
        this.#adaptive.floor,
        this.#adaptive.risePerSecond,
        ...groups.flatMap((group) => {
          const limits = this.#resolved(group);
          return [group, limits.intervalMs, limits.toleranceMs, limits.adaptive ? '1' : '0', limits.concurrency];
        }),
        ...args,
      ],
    }));
    if (reply[0] !== ScriptCode.Ok) throw unexpectedReply(operation, reply);
    return reply.slice(1);
  }

  async confirmStart(lease: Lease): Promise<StartCheck> {
    checkName(lease.group, 'group', 'confirmStart');
    checkName(lease.leaseId, 'leaseId', 'confirmStart');
    let reply: unknown;
    try {
      const limits = this.#resolved(lease.group);
      const group = this.#keys.group(lease.group);
      const server = lease.serverConcurrency === undefined ? undefined : lease.server;
      reply = await this.#runScript(confirmStartScript, {
        keys: [group, this.#keys.leases(lease.group), server === undefined ? group : this.#serverKeys.server(server), server === undefined ? group : this.#serverKeys.leases(server)],
        args: [lease.leaseId, limits.concurrency, this.#policy.leaseMs, MIN_STEP_MS, limits.adaptive ? '1' : '0', this.#adaptive.floor, this.#adaptive.risePerSecond, CONFIRM_AFTER_WAIT_MS, server === undefined ? 0 : (lease.serverConcurrency ?? 0)],
      });
    } catch (error) {
      throw redisFailure('confirmStart', error);
    }
    if (!Array.isArray(reply) || reply.length === 0) throw unexpectedReply('confirmStart', reply);
    // A start given back here gives its server slot back too.
    if (reply[0] !== ScriptCode.Ok) await this.#releaseServer(lease);
    switch (reply[0]) {
      case ScriptCode.Ok:
        return { go: true };
      case ScriptCode.DeniedPaused:
        return { go: false, reason: 'paused', retryInMs: Math.ceil(asNumber(reply[1])) };
      case ScriptCode.DeniedConcurrency:
        return { go: false, reason: 'concurrency', retryInMs: asNumber(reply[1]) };
      case ScriptCode.DeniedServerConcurrency:
        return { go: false, reason: 'server-concurrency', retryInMs: asNumber(reply[1]) };
      default:
        throw unexpectedReply('confirmStart', reply);
    }
  }

  async pause(group: string, forMs: number, reason = 'paused by admin'): Promise<void> {
    checkName(group, 'group', 'pause');
    checkDuration(forMs, 'forMs', 'pause');
    await this.#call('pause', pauseScript, () => ({
      keys: [this.#keys.policy, this.#keys.group(group), this.#keys.groups],
      args: [this.#version, group, forMs, reason, this.#policy.maxPauseMs],
    }));
  }

  async resume(group: string): Promise<void> {
    checkName(group, 'group', 'resume');
    await this.#call('resume', resumeScript, () => ({ keys: [this.#keys.group(group)], args: [] }));
  }

  async setMinInterval(group: string, ms: number): Promise<void> {
    checkName(group, 'group', 'setMinInterval');
    checkDuration(ms, 'ms', 'setMinInterval');
    await this.#call('setMinInterval', setMinIntervalScript, () => ({
      keys: [this.#keys.policy, this.#keys.group(group), this.#keys.groups],
      args: [this.#version, group, ms, this.#maxMinIntervalMs],
    }));
  }

  async status(group: string): Promise<GroupStatus> {
    checkName(group, 'group', 'status');
    await this.flush();
    const [status] = await this.#readStatus([group]);
    if (!status) throw unexpectedReply('status', []);
    return status;
  }

  async servers(): Promise<ServerStatus[]> {
    await this.#reload('servers');
    try {
      return await readServerStatuses(this.#redis, this.#serverKeys, { level: this.#serverLevel, shards: this.#shard.count, groupKey: (group) => this.#keys.group(group) });
    } catch (error) {
      throw redisFailure('servers', error);
    }
  }

  async list(): Promise<GroupStatus[]> {
    await this.flush();
    let groups: string[];
    try {
      groups = await this.#redis.smembers(this.#keys.groups);
    } catch (error) {
      throw redisFailure('list', error);
    }
    groups.sort();
    const statuses: GroupStatus[] = [];
    for (let start = 0; start < groups.length; start += STATUS_CHUNK) {
      statuses.push(...(await this.#readStatus(groups.slice(start, start + STATUS_CHUNK))));
    }
    return statuses;
  }

  async globalStatus(): Promise<GlobalStatus> {
    let counters: (string | null)[];
    try {
      await this.#reload('globalStatus');
      counters = await this.#redis.hmget(this.#keys.global, 'admitted', 'deferred');
    } catch (error) {
      throw error instanceof InvalidLimitPolicyError ? error : redisFailure('globalStatus', error);
    }
    return {
      rate: this.#policy.globalRate ?? null,
      paceMs: this.#globalIntervalMs,
      admitted: Number(counters[0] ?? 0),
      deferred: Number(counters[1] ?? 0),
    };
  }

  async #readStatus(groups: readonly string[]): Promise<GroupStatus[]> {
    const reply = await this.#call('status', readStatusScript, () => ({
      keys: [this.#keys.policy, ...groups.flatMap((group) => [this.#keys.group(group), this.#keys.leases(group)])],
      args: [this.#adaptive.floor, this.#adaptive.risePerSecond],
    }));
    if (reply.length !== 3 + groups.length * STATUS_FIELDS) throw unexpectedReply('status', reply);
    // The limits shown must be the fleet's, not a stale cache.
    if (asString(reply[1]) !== this.#version) await this.#reload('status');
    const now = asNumber(reply[2]);
    return groups.map((group, i) => {
      const field = (k: number): unknown => reply[3 + i * STATUS_FIELDS + k];
      const pausedUntil = optionalNumber(field(0));
      const paused = pausedUntil !== null && pausedUntil > now;
      const lastAdmitAt = optionalNumber(field(5));
      const minIntervalMs = Math.min(optionalNumber(field(6)) ?? 0, this.#maxMinIntervalMs);
      const resolved = this.#resolved(group);
      const paceFactor = resolved.adaptive ? asNumber(field(11)) : 1;
      return {
        group,
        limits: resolved.limits,
        minIntervalMs,
        paceMs: Math.max(resolved.intervalMs, minIntervalMs) / paceFactor,
        adaptive: resolved.adaptive,
        paceFactor,
        effectiveConcurrency: resolved.concurrency === 0 ? null : pacedConcurrency(resolved.concurrency, paceFactor),
        paceReason: asString(field(12)) ?? null,
        paceChangedAt: roundedOrNull(optionalNumber(field(13))),
        paceCuts: optionalNumber(field(14)) ?? 0,
        latencyMs: roundedOrNull(optionalNumber(field(15))),
        baselineMs: roundedOrNull(optionalNumber(field(16))),
        inFlight: optionalNumber(field(10)) ?? 0,
        pausedUntil: paused ? Math.ceil(pausedUntil) : null,
        pauseReason: paused ? (asString(field(1)) ?? null) : null,
        strikes: optionalNumber(field(2)) ?? 0,
        admitted: optionalNumber(field(3)) ?? 0,
        deferred: optionalNumber(field(4)) ?? 0,
        lateStarts: optionalNumber(field(7)) ?? 0,
        slippedStarts: optionalNumber(field(8)) ?? 0,
        started: optionalNumber(field(9)) ?? 0,
        lastAdmitAt: lastAdmitAt === null ? null : Math.round(lastAdmitAt),
      };
    });
  }

  /**
   * Runs a script that carries the cached policy version; on a StalePolicy answer,
   * reloads the policy and rebuilds the arguments (limits may differ) before retrying.
   */
  async #call(
    operation: string,
    script: LuaScript,
    build: () => { keys: readonly string[]; args: readonly LuaArg[] },
  ): Promise<unknown[]> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      let reply: unknown;
      try {
        reply = await this.#runScript(script, build());
      } catch (error) {
        throw redisFailure(operation, error);
      }
      if (!Array.isArray(reply) || reply.length === 0) throw unexpectedReply(operation, reply);
      if (reply[0] !== ScriptCode.StalePolicy) return reply as unknown[];
      await this.#reload(operation);
    }
    throw new PolicyVersionRaceError({ operation, attempts: MAX_ATTEMPTS });
  }

  #runScript(script: LuaScript, call: { keys: readonly string[]; args: readonly LuaArg[] }): Promise<unknown> {
    return script.run(this.#redis, call.keys, call.args);
  }

  /** Loads the stored policy (concurrent callers share one read). */
  #reload(operation: string): Promise<LimitPolicy | null> {
    this.#reloading ??= this.#readPolicy(operation).finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  async #readPolicy(operation: string): Promise<LimitPolicy | null> {
    let stored: (string | null)[];
    try {
      stored = await this.#redis.hmget(this.#keys.policy, 'json', 'version');
    } catch (error) {
      throw redisFailure(operation, error);
    }
    const [json, version] = stored;
    if (!json || !version) {
      this.#usePolicy(this.#localPolicy, NO_POLICY_VERSION);
      return null;
    }
    const policy = parseStoredPolicy(json, operation);
    this.#usePolicy(policy, version);
    return policy;
  }

  #usePolicy(policy: LimitPolicy, version: string): void {
    this.#policyKnown = true;
    if (version === this.#version && policy === this.#policy) return;
    this.#policy = policy;
    this.#version = version;
    this.#limits.clear();
    this.#serverLevel = new ServerLevel(policy, this.#serverKeys, this.#shard);
  }

  /** The server level under the policy in use (see server-level.ts). */
  get serverLevel(): ServerLevel {
    return this.#serverLevel;
  }

  /**
   * This limiter's spacing of the crawl-wide cap: its share's own plus the
   * safety margin's part (a window cap; no server sees it as a bucket). Starts
   * spaced (DURATION + margin) / share apart hold at most `share` in any
   * DURATION, so the shards' whole shares add up to at most MAX.
   */
  get #globalIntervalMs(): number {
    const rate = this.#policy.globalRate ?? null;
    if (rate === null) return 0;
    const share = globalShare(rate.max, this.#shard.index, this.#shard.count);
    if (share === 0) {
      throw new GroupLimiterArgumentError(`globalRate ${rate.max}/${rate.durationMs}ms leaves shard ${this.#shard.index} of ${this.#shard.count} no start: give a cap of at least one start per shard`, { operation: 'acquire', argument: 'globalRate' });
    }
    return (rate.durationMs + this.#policy.safetyMarginMs) / share;
  }

  /**
   * A start at `startAt` (Redis clock) on this process's clock, and the latest
   * moment it may still go (see `Admission.startBy`). `fallback` stands in
   * while the clock's offset is unknown.
   */
  #localStart(group: string, startAt: number, fallback: number): { localStartAt: number; startBy: number } {
    const localStartAt = this.#clock.toLocal(startAt) ?? fallback;
    return { localStartAt, startBy: localStartAt + this.#lateAllowanceMs(group) };
  }

  /**
   * How late a start may go past its slot: half the margin its pacing keeps (so
   * the other half absorbs arrival jitter), at most half the safety margin, at
   * least MIN_LATE_ALLOWANCE_MS.
   * The margin between two starts matters for a rate whose own spacing is
   * longer than that floor (a server spacing requests, nginx's limit_req with
   * no burst). A faster rate cannot be held pair by pair at that floor anyway;
   * it is held per window, where any start may be late by up to the safety
   * margin (max starts spaced by duration / max + safety / max or more fit
   * in duration + safety): half of it, as a group without a rate. A late
   * start costs round trips (taken again, or given back and asked for again),
   * and on a busy machine the admission's own round trip makes many late.
   */
  #lateAllowanceMs(group: string): number {
    const limits = this.#resolved(group);
    let allowance = this.#policy.safetyMarginMs / 2;
    const ownSpacingMs = limits.intervalMs - limits.marginMs;
    if (limits.intervalMs > 0 && ownSpacingMs >= MIN_LATE_ALLOWANCE_MS) allowance = Math.min(allowance, limits.marginMs / 2);
    return Math.max(MIN_LATE_ALLOWANCE_MS, allowance);
  }

  /** Always set by normalizePolicy; the type keeps it optional for older callers. */
  get #adaptive(): AdaptivePacing {
    return this.#policy.adaptive ?? DEFAULT_ADAPTIVE_PACING;
  }

  /** Always set by normalizePolicy; the type keeps it optional for older callers. */
  get #maxMinIntervalMs(): number {
    return this.#policy.maxMinIntervalMs ?? DEFAULT_MAX_MIN_INTERVAL_MS;
  }

  #resolved(group: string): ResolvedLimits {
    let limits = this.#limits.get(group);
    if (!limits) {
      limits = resolveLimits(this.#policy, group);
      if (this.#limits.size >= LIMITS_CACHE_SIZE) {
        const oldest = this.#limits.keys().next();
        if (!oldest.done) this.#limits.delete(oldest.value);
      }
      this.#limits.set(group, limits);
    }
    return limits;
  }
}

function parseStoredPolicy(json: string, operation: string): LimitPolicy {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new InvalidLimitPolicyError(['the stored policy is not valid JSON'], { operation, cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null) {
    throw new InvalidLimitPolicyError(['the stored policy is not an object'], { operation });
  }
  return normalizePolicy(parsed, operation);
}

function checkName(value: unknown, argument: string, operation: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new GroupLimiterArgumentError(`${argument} must be a non-empty string`, { operation, argument });
  }
}

function invalidOutcome(outcome: Outcome): GroupLimiterArgumentError | undefined {
  const { status, retryAfterMs } = outcome;
  if (status !== undefined && !(Number.isInteger(status) && status >= 100 && status <= 999)) {
    return new GroupLimiterArgumentError(`status must be an HTTP status code, got ${status}`, { operation: 'release', argument: 'status' });
  }
  if (retryAfterMs !== undefined && !(Number.isFinite(retryAfterMs) && retryAfterMs >= 0)) {
    return new GroupLimiterArgumentError(`retryAfterMs must be a finite number >= 0, got ${retryAfterMs}`, { operation: 'release', argument: 'retryAfterMs' });
  }
  const { latencyMs, failure } = outcome;
  if (latencyMs !== undefined && !(Number.isFinite(latencyMs) && latencyMs >= 0)) {
    return new GroupLimiterArgumentError(`latencyMs must be a finite number >= 0, got ${latencyMs}`, { operation: 'release', argument: 'latencyMs' });
  }
  if (failure !== undefined && failure !== 'timeout' && failure !== 'network') {
    return new GroupLimiterArgumentError(`failure must be 'timeout' or 'network', got ${JSON.stringify(failure)}`, { operation: 'release', argument: 'failure' });
  }
  return undefined;
}

function checkDuration(value: number, argument: string, operation: string): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new GroupLimiterArgumentError(`${argument} must be a finite number >= 0, got ${value}`, { operation, argument });
  }
}

function redisFailure(operation: string, error: unknown): GroupLimiterRedisError {
  // A ReplyError is Redis rejecting the script itself: retrying cannot help.
  const rejected = error instanceof Error && error.name === 'ReplyError';
  return new GroupLimiterRedisError(`${operation} failed in Redis`, { operation, retryable: !rejected, cause: error });
}

function unexpectedReply(operation: string, reply: unknown): GroupLimiterRedisError {
  return new GroupLimiterRedisError(`${operation}: unexpected script reply ${JSON.stringify(reply)}`, { operation, retryable: false });
}

function asNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw unexpectedReply('parse', value);
  return n;
}

function optionalNumber(value: unknown): number | null {
  return value === null || value === undefined || value === '' ? null : asNumber(value);
}

/** The concurrency cap at pace factor `f`, as `paced_limits` computes it in the scripts. */
function pacedConcurrency(concurrency: number, f: number): number {
  return f >= 1 ? concurrency : Math.max(1, Math.floor(concurrency * f + 1e-9));
}

function roundedOrNull(value: number | null): number | null {
  return value === null ? null : Math.round(value);
}

/** The release reply's pace change: {Ok} alone, or {Ok, direction, from, to, cause, reason}. */
function paceChangeOf(group: string, reply: readonly unknown[]): PaceChange | null {
  if (reply.length < 6) return null;
  const direction = reply[1];
  if (direction !== 'down' && direction !== 'up') throw unexpectedReply('release', reply);
  return {
    group,
    direction,
    from: asNumber(reply[2]),
    to: asNumber(reply[3]),
    cause: asString(reply[4]) ?? '',
    reason: asString(reply[5]) ?? '',
  };
}

function asString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/**
 * Shard `index`'s whole share of a crawl-wide cap of `max` starts split over
 * `count` shards: max / count, and one more for each of the first max % count.
 * The shares add up to `max`.
 */
export function globalShare(max: number, index: number, count: number): number {
  return Math.floor(max / count) + (index < max % count ? 1 : 0);
}
