import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';

/** What `--render auto` does with one page of a group. */
export type AutoDecision = 'render' | 'sample' | 'plain';

/** A group's verdict as the fleet holds it. */
export interface GroupRenderVerdict {
  readonly verdict: 'render' | 'static';
  /** Epoch ms the verdict was last confirmed. */
  readonly at: number;
}

export interface RenderVerdictOptions {
  /** Rendered pages in a row that find nothing the plain fetch missed before a group is judged static. @default 3 */
  readonly samples?: number;
  /** A static group gets one rendered page again this often, in case the site changed. @default 10 minutes */
  readonly recheckMs?: number;
  /** How long a process trusts the verdict it read. @default 2 s */
  readonly cacheMs?: number;
}

/** The Redis hash of every group's verdict, and the counters behind them. */
export function renderVerdictsKey(namespace: string): string {
  return `${stateKeyPrefix(namespace)}:render-verdicts`;
}

/**
 * `--render auto`, fleet-wide: whether a group's pages need a browser,
 * learned from evidence and shared by every worker through one Redis hash.
 * A group with no verdict has its pages rendered (each a sample: its plain
 * fetch is at hand, so the comparison costs nothing more). One page whose
 * rendering finds links or text the plain fetch missed makes the group
 * `render`; `samples` rendered pages in a row that find nothing more make it
 * `static`. A rendered group keeps being judged by every page it renders; a
 * static one gets one rendered page per `recheckMs` (one worker claims it).
 * Each worker reads a group's verdict at most once per `cacheMs`.
 */
export class RenderVerdicts {
  readonly #redis: RedisClient;
  readonly #key: string;
  readonly #samples: number;
  readonly #recheckMs: number;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, { verdict: GroupRenderVerdict | undefined; readAt: number }>();

  constructor(redis: RedisClient, namespace: string, options: RenderVerdictOptions = {}) {
    this.#redis = redis;
    this.#key = renderVerdictsKey(namespace);
    this.#samples = options.samples ?? 3;
    this.#recheckMs = options.recheckMs ?? 600_000;
    this.#cacheMs = options.cacheMs ?? 2_000;
  }

  /** How to treat the next page of `group`. */
  async decide(group: string): Promise<AutoDecision> {
    const verdict = await this.read(group);
    if (verdict === undefined) return 'sample';
    if (verdict.verdict === 'render') return 'render';
    if (Date.now() - verdict.at < this.#recheckMs) return 'plain';
    // One worker of the fleet renders the recheck; the claim lapses with the period.
    const claimed = await this.#redis.set(`${this.#key}:recheck:${group}`, '1', 'PX', this.#recheckMs, 'NX');
    return claimed === 'OK' ? 'sample' : 'plain';
  }

  /** The verdict the fleet holds for `group` (cached for `cacheMs`); undefined while undecided. */
  async read(group: string): Promise<GroupRenderVerdict | undefined> {
    const cached = this.#cache.get(group);
    if (cached && performance.now() - cached.readAt < this.#cacheMs) return cached.verdict;
    const verdict = parseVerdict(await this.#redis.hget(this.#key, group));
    this.#cache.set(group, { verdict, readAt: performance.now() });
    return verdict;
  }

  /** One rendered page's evidence: did the browser find what the plain fetch missed? Returns the group's verdict after it. */
  async report(group: string, neededBrowser: boolean): Promise<GroupRenderVerdict | undefined> {
    const now = Date.now();
    let verdict: GroupRenderVerdict | undefined;
    if (neededBrowser) {
      verdict = { verdict: 'render', at: now };
      await this.#redis.multi().hset(this.#key, group, `render:${now}`).hset(this.#key, `${group}|plain`, '0').exec();
    } else {
      const inARow = await this.#redis.hincrby(this.#key, `${group}|plain`, 1);
      if (inARow >= this.#samples) {
        verdict = { verdict: 'static', at: now };
        await this.#redis.hset(this.#key, group, `static:${now}`);
      } else {
        verdict = parseVerdict(await this.#redis.hget(this.#key, group));
      }
    }
    this.#cache.set(group, { verdict, readAt: performance.now() });
    return verdict;
  }
}

function parseVerdict(value: string | null): GroupRenderVerdict | undefined {
  const match = /^(render|static):(\d+)$/.exec(value ?? '');
  if (!match) return undefined;
  return { verdict: match[1] === 'render' ? 'render' : 'static', at: Number(match[2]) };
}
