import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';

/** Why a group's jobs are held back (beyond ordinary rate and concurrency pacing). */
export type WaitCause = 'robots' | 'pause';

/** One group that waits, as `crawl`'s progress line and `group list` show it. */
export interface GroupWait {
  readonly group: string;
  readonly cause: WaitCause;
  /** Short and human: `robots.txt unreachable (HTTP 503)`, `429 pause`. */
  readonly label: string;
  /** When the wait is expected to end (robots.txt fetched again, pause over), ms since the epoch. */
  readonly until: number;
  /** When the group began waiting, without a break since (ms since the epoch). */
  readonly since: number;
}

/**
 * A wait is shown a little past its `until`: the robots.txt fetch or the first
 * job after a pause takes a moment, and a record that flickers off and on
 * between retries says less than one that stays.
 */
const SHOW_PAST_UNTIL_MS = 10_000;
/** Re-written no more often than this while the cause and label stay the same. */
const REWRITE_AFTER_MS = 1_000;

export function groupWaitsKey(namespace: string): string {
  return `${stateKeyPrefix(namespace)}:group-waits`;
}

/**
 * The fleet's record of waiting groups: one Redis hash, a field per group,
 * written by the workers as they defer a job for a pause or an unreachable
 * robots.txt, and cleared when that group goes again. Writes are skipped when
 * nothing changed, so a backlog of deferred jobs costs one write, not one each.
 */
export class GroupWaits {
  readonly #redis: RedisClient;
  readonly #key: string;
  /** What this process last wrote per group. */
  readonly #noted = new Map<string, GroupWait>();

  constructor(redis: RedisClient, namespace: string) {
    this.#redis = redis;
    this.#key = groupWaitsKey(namespace);
  }

  /**
   * Records that `group` waits and returns since when it has been waiting
   * without a break (the fleet's record keeps the start, so a job that comes
   * late to a long pause is judged by the group's wait, not its own). `label`
   * is asked for only when the record changes (it may cost a Redis read). A
   * failed Redis call only loses the display; the local start is used then.
   */
  async note(group: string, wait: { cause: WaitCause; until: number; label: string | (() => Promise<string>) }): Promise<number> {
    const now = Date.now();
    const previous = this.#noted.get(group);
    const ongoing = previous !== undefined && previous.until + SHOW_PAST_UNTIL_MS >= now ? previous : undefined;
    if (ongoing?.cause === wait.cause && Math.abs(ongoing.until - wait.until) < REWRITE_AFTER_MS) {
      if (typeof wait.label !== 'string' || wait.label === ongoing.label) return ongoing.since;
    }
    const label = typeof wait.label === 'string' ? wait.label : await wait.label();
    const stored = await this.#redis.hget(this.#key, group).then(
      (value) => (value === null ? undefined : decode(group, value)),
      () => undefined,
    );
    const fleet = stored !== undefined && stored.until + SHOW_PAST_UNTIL_MS >= now ? stored : undefined;
    const since = Math.min(fleet?.since ?? now, ongoing?.since ?? now);
    this.#noted.set(group, { group, cause: wait.cause, until: wait.until, label, since });
    await this.#redis.hset(this.#key, group, JSON.stringify({ cause: wait.cause, label, until: wait.until, since })).catch(() => undefined);
    return since;
  }

  /** The group goes again (or its jobs were dead-lettered): drop the record this process wrote. */
  async clear(group: string): Promise<void> {
    if (!this.#noted.delete(group)) return;
    await this.#redis.hdel(this.#key, group).catch(() => undefined);
  }
}

/** Groups waiting now, soonest end first; records long past their end are deleted. */
export async function readGroupWaits(redis: RedisClient, namespace: string, now = Date.now()): Promise<GroupWait[]> {
  const key = groupWaitsKey(namespace);
  const fields = await redis.hgetall(key);
  const waits: GroupWait[] = [];
  const stale: string[] = [];
  for (const [group, value] of Object.entries(fields)) {
    const wait = decode(group, value);
    if (wait === undefined || wait.until + SHOW_PAST_UNTIL_MS < now) stale.push(group);
    else waits.push(wait);
  }
  if (stale.length > 0) await redis.hdel(key, ...stale).catch(() => undefined);
  return waits.sort((a, b) => a.until - b.until || a.group.localeCompare(b.group));
}

/** `2 groups waiting: robots.txt unreachable (retry in 40 s), 429 pause`, or `undefined` when none waits. */
export function describeGroupWaits(waits: readonly GroupWait[], now = Date.now()): string | undefined {
  if (waits.length === 0) return undefined;
  const kinds = new Map<string, { count: number; until: number; cause: WaitCause }>();
  for (const wait of waits) {
    const kind = kinds.get(wait.label);
    if (kind === undefined) kinds.set(wait.label, { count: 1, until: wait.until, cause: wait.cause });
    else kind.count += 1;
  }
  const parts = [...kinds].slice(0, 3).map(([label, kind]) => {
    const times = kind.count > 1 ? ` ×${kind.count}` : '';
    return kind.cause === 'robots' ? `${label}${times} (${retryIn(kind.until, now)})` : `${label}${times}`;
  });
  if (kinds.size > 3) parts.push('...');
  return `${waits.length} group${waits.length === 1 ? '' : 's'} waiting: ${parts.join(', ')}`;
}

/** One group's wait as `group list` shows it: `robots.txt unreachable (HTTP 503), retry in 4 s`. */
export function describeGroupWait(wait: GroupWait, now = Date.now()): string {
  return wait.cause === 'robots' ? `${wait.label}, ${retryIn(wait.until, now)}` : `${wait.label}, ${untilText(wait.until, now)}`;
}

function retryIn(until: number, now: number): string {
  const seconds = Math.ceil((until - now) / 1000);
  return seconds > 0 ? `retry in ${seconds} s` : 'retrying now';
}

function untilText(until: number, now: number): string {
  const seconds = Math.ceil((until - now) / 1000);
  return seconds > 0 ? `${seconds} s left` : 'ending now';
}

function decode(group: string, value: string): GroupWait | undefined {
  try {
    const parsed = JSON.parse(value) as { cause?: unknown; label?: unknown; until?: unknown; since?: unknown };
    if ((parsed.cause !== 'robots' && parsed.cause !== 'pause') || typeof parsed.label !== 'string' || typeof parsed.until !== 'number') return undefined;
    const since = typeof parsed.since === 'number' ? parsed.since : parsed.until;
    return { group, cause: parsed.cause, label: parsed.label, until: parsed.until, since };
  } catch {
    return undefined;
  }
}
