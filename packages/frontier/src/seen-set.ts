import { createHash } from 'node:crypto';
import type { LuaArg } from '@crawlq/redis';
import type { RedisClient } from '@crawlq/redis';
import { checkSeenScript } from './lua/check-seen.js';
import { claimScript } from './lua/claim.js';
import { markSeenScript } from './lua/mark-seen.js';
import { admitScript, pushClaimedScript } from './lua/admit.js';
import { SeenScriptStatus, type ReserveCode } from './lua/seen-script-status.js';
import { FrontierArgumentError, FrontierError, SeenSetMismatchError } from './errors.js';
import { frontierKeys, type FrontierKeys } from './keys.js';
import { bloomFalsePositiveRate, bloomGeometry, DEFAULT_SEEN_SET_MODE, type BloomGeometry, type SeenSetMode } from './seen-set-mode.js';

/** Options for {@link SeenSet}. */
export interface SeenSetOptions {
  /** A connection the seen-set may share. */
  readonly redis: RedisClient;
  /** The crawl's namespace: keys live under its hash tag (see `frontierKeys`). */
  readonly namespace: string;
  /** @default { mode: 'exact' } */
  readonly mode?: SeenSetMode | undefined;
}

/** A URL the frontier wants to admit: the normalised URL, its fingerprint (`urlFingerprint`) and its group. */
export interface SeenSetCandidate {
  readonly fingerprint: string;
  readonly group: string;
  readonly url: string;
}

/** Page budgets checked by {@link SeenSet.admit}; 0 = no limit. */
export interface PageBudgets {
  /** 0: none; -1: this shard's grant of the crawl's budget (see `grantPagesScript`). */
  readonly maxPages: number;
  readonly maxPagesPerGroup: number;
  /** With maxPages -1: a grant this shard was given, which Redis may not hold yet. */
  readonly granted?: number;
}

/** What {@link SeenSet.describe} reports about the stored seen-set. */
export type SeenSetInfo =
  | {
      readonly mode: 'exact';
      /** Distinct fingerprints stored. */
      readonly urls: number;
      /** Small hashes holding them. */
      readonly buckets: number;
    }
  | {
      readonly mode: 'bloom';
      /** Insertions that set at least one new bit (about the distinct URLs, claims' owner entries included). */
      readonly urls: number;
      readonly geometry: BloomGeometry;
      readonly expectedUrls: number;
      readonly falsePositiveRate: number;
      /** The false-positive rate at the current fill. */
      readonly currentFalsePositiveRate: number;
    };

/** Where admitted URLs go in their groups' backlogs: their depth, and a priority (0: none; see `lua/backlog.lua`). */
export interface BacklogPlace {
  readonly depth: number;
  readonly priority?: number;
  /**
   * Groups a job in this process has in hand and will ask to go on with (see
   * Frontier.holdBacklog): one that starts waiting is due for a release
   * only BACKLOG_HOLD_MS later.
   */
  readonly held?: ReadonlyMap<string, number>;
}

/** How long a held group's new links wait for its job to take them before a release may (see admit.lua). */
export const BACKLOG_HOLD_MS = 2_000;

/** Fingerprints per script call, so one call never blocks Redis for long. */
const CHUNK = 10_000;
const FINGERPRINT = /^u[A-Za-z0-9_-]{22}$/;

/**
 * The crawl's fleet-wide record of admitted URLs, in one of two modes (see
 * {@link SeenSetMode}). Every operation is one atomic Lua script per chunk of
 * {@link CHUNK} fingerprints; the mode and geometry live in Redis, so every
 * worker reads the same structure, and a worker configured for the other mode
 * is refused ({@link SeenSetMismatchError}) instead of silently deduping nothing.
 */
export class SeenSet {
  readonly #redis: RedisClient;
  readonly #keys: FrontierKeys;
  readonly #mode: SeenSetMode;
  readonly #config: readonly (string | number)[];

  constructor(options: SeenSetOptions) {
    this.#mode = options.mode ?? DEFAULT_SEEN_SET_MODE;
    this.#keys = frontierKeys(options.namespace);
    this.#config = configArgs(this.#mode);
    this.#redis = options.redis;
  }

  /** The configured mode (the stored one must match it). */
  get mode(): SeenSetMode {
    return this.#mode;
  }

  /**
   * Admits candidates in one atomic step per chunk: those new and within the
   * budgets are counted against the budgets, marked seen and appended to
   * their groups' backlogs at `depth` and `priority` (see `admitScript`). Candidates must be
   * distinct. One code per candidate, in order.
   */
  async admit(candidates: readonly SeenSetCandidate[], budgets: PageBudgets, { depth, priority = 0, held }: BacklogPlace): Promise<ReserveCode[]> {
    const codes: ReserveCode[] = [];
    for (let start = 0; start < candidates.length; start += CHUNK) {
      const chunk = candidates.slice(start, start + CHUNK);
      const heldHere = held === undefined || held.size === 0 ? [] : [...new Set(chunk.map(({ group }) => group))].filter((group) => held.has(group));
      const args: LuaArg[] = [...this.#config, budgets.maxPages, budgets.maxPagesPerGroup, depth, this.#keys.backlog, budgets.granted ?? 0, priority, BACKLOG_HOLD_MS, heldHere.length, ...heldHere];
      for (const { fingerprint, group, url } of chunk) args.push(fingerprintBytes(fingerprint), fingerprint, group, url);
      const reply = await this.#run('admit', () =>
        admitScript.run(this.#redis, [this.#keys.seen, this.#keys.admitted, this.#keys.admittedPerGroup, this.#keys.backlogCount, this.#keys.pagesGranted], args),
      );
      if (reply.length !== chunk.length) throw unexpectedReply('admit', reply);
      codes.push(...(reply as ReserveCode[]));
    }
    return codes;
  }

  /**
   * Appends a URL already claimed for a job ({@link claim}) to its group's
   * backlog: a redirect's target handed over as a job of its own.
   */
  async pushClaimed(candidate: SeenSetCandidate, options: { readonly depth: number; readonly redirects: number }): Promise<void> {
    try {
      await pushClaimedScript.run(this.#redis, [this.#keys.backlogCount], [
        this.#keys.backlog,
        candidate.group,
        options.depth,
        checkedFingerprint(candidate.fingerprint),
        candidate.url,
        options.redirects,
      ]);
    } catch (error) {
      throw redisFailure('push', error);
    }
  }

  /** Marks fingerprints seen; returns how many were not yet. */
  async mark(fingerprints: readonly string[]): Promise<number> {
    let added = 0;
    for (let start = 0; start < fingerprints.length; start += CHUNK) {
      const args = fingerprints.slice(start, start + CHUNK).map(fingerprintBytes);
      const reply = await this.#run('mark', () => markSeenScript.run(this.#redis, [this.#keys.seen], [...this.#config, ...args]));
      added += Number(reply[0]);
    }
    return added;
  }

  /** Whether each fingerprint was seen (bloom: or is a false positive). Read-only. */
  async has(fingerprints: readonly string[]): Promise<boolean[]> {
    const seen: boolean[] = [];
    for (let start = 0; start < fingerprints.length; start += CHUNK) {
      const chunk = fingerprints.slice(start, start + CHUNK);
      const reply = await this.#run('has', () => checkSeenScript.run(this.#redis, [this.#keys.seen], [...this.#config, ...chunk.map(fingerprintBytes)]));
      if (reply.length !== chunk.length) throw unexpectedReply('has', reply);
      for (const flag of reply) seen.push(flag === 1);
    }
    return seen;
  }

  /**
   * Marks one fingerprint seen, atomically; true if it was new. With `owner`
   * (the claiming job's id), true again for a later claim by the same owner.
   */
  async claim(fingerprint: string, owner = ''): Promise<boolean> {
    const bytes = fingerprintBytes(fingerprint);
    // Exact mode keeps a 16-byte digest of the owner as the entry's value (a long
    // value would turn its bucket into a big hashtable); bloom mode a second filter
    // entry, the fingerprint of the pair.
    const tag = owner === '' ? '' : digest16('crawlq-owner', owner);
    const pair = owner !== '' && this.#mode.mode === 'bloom' ? digest16('crawlq-claim', owner, bytes) : '';
    const reply = await this.#run('claim', () => claimScript.run(this.#redis, [this.#keys.seen], [...this.#config, bytes, tag, pair]));
    return reply[0] === 1;
  }

  /** What Redis holds for this crawl's seen-set, or `null` if nothing was marked yet. */
  async describe(): Promise<SeenSetInfo | null> {
    let meta: Record<string, string>;
    try {
      if ((await this.#redis.type(this.#keys.seen)) !== 'hash') return null;
      meta = await this.#redis.hgetall(this.#keys.seen);
    } catch (error) {
      throw redisFailure('describe', error);
    }
    const urls = Number(meta.count ?? 0);
    if (meta.mode === 'exact') {
      return { mode: 'exact', urls, buckets: 2 ** Number(meta.level ?? 0) + Number(meta.split ?? 0) };
    }
    const geometry: BloomGeometry = {
      bits: Number(meta.bits),
      hashes: Number(meta.hashes),
      partBits: Number(meta.partBits),
      parts: Math.ceil(Number(meta.bits) / Number(meta.partBits)),
    };
    return {
      mode: 'bloom',
      urls,
      geometry,
      expectedUrls: Number(meta.expectedUrls),
      falsePositiveRate: Number(meta.falsePositiveRate),
      currentFalsePositiveRate: bloomFalsePositiveRate(geometry, urls),
    };
  }

  /** Runs one script; returns the reply after the status element. */
  async #run(operation: string, call: () => Promise<unknown>): Promise<unknown[]> {
    let reply: unknown;
    try {
      reply = await call();
    } catch (error) {
      throw redisFailure(operation, error);
    }
    if (!Array.isArray(reply) || reply.length === 0) throw unexpectedReply(operation, reply);
    if (reply[0] === SeenScriptStatus.ModeMismatch) {
      throw new SeenSetMismatchError({ configured: this.#mode.mode, stored: String(reply[1]) });
    }
    if (reply[0] !== SeenScriptStatus.Ok) throw unexpectedReply(operation, reply);
    return reply.slice(1) as unknown[];
  }
}

/** The ARGV prefix every seen-set script reads (ARGV[1..6]: see `lua/seen-set.lua`). */
function configArgs(mode: SeenSetMode): (string | number)[] {
  switch (mode.mode) {
    case 'exact':
      return ['exact', 0, 0, 0, 0, 0];
    case 'bloom': {
      const geometry = bloomGeometry(mode.expectedUrls, mode.falsePositiveRate, mode.maxPartBits);
      return ['bloom', geometry.bits, geometry.hashes, geometry.partBits, mode.expectedUrls, mode.falsePositiveRate];
    }
    default:
      throw new FrontierArgumentError(`seenSet.mode must be 'exact' or 'bloom'`, 'seenSet.mode');
  }
}

function checkedFingerprint(fingerprint: string): string {
  fingerprintBytes(fingerprint);
  return fingerprint;
}

/** The 16 raw bytes of a `urlFingerprint` ('u' + 22 base64url characters): what Redis stores. */
function fingerprintBytes(fingerprint: string): Buffer {
  if (!FINGERPRINT.test(fingerprint)) {
    throw new FrontierArgumentError(`not a URL fingerprint: ${JSON.stringify(fingerprint.slice(0, 40))}`, 'fingerprint');
  }
  return Buffer.from(fingerprint.slice(1), 'base64url');
}

/** 16 bytes of SHA-256 over a purpose label and the parts, newline-separated. */
function digest16(purpose: string, ...parts: (string | Buffer)[]): Buffer {
  const hash = createHash('sha256').update(purpose);
  for (const part of parts) hash.update('\n').update(part);
  return hash.digest().subarray(0, 16);
}

function redisFailure(operation: string, error: unknown): FrontierError {
  // A ReplyError is Redis rejecting the script itself: retrying cannot help.
  const rejected = error instanceof Error && error.name === 'ReplyError';
  return new FrontierError(`seen-set ${operation} failed in Redis`, { retryable: !rejected, cause: error });
}

function unexpectedReply(operation: string, reply: unknown): FrontierError {
  return new FrontierError(`seen-set ${operation}: unexpected script reply ${JSON.stringify(reply)?.slice(0, 200)}`, { retryable: false });
}
