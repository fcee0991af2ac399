import { setTimeout as sleep } from 'node:timers/promises';
import type { CrawlqConfig } from '@crawlq/config';
import type { Frontier } from '@crawlq/frontier';

/**
 * A due URL is leased this long when it moves to its backlog: due again then
 * unless its fetch is recorded first, so a process killed between the two
 * steps, or a job dead-lettered, drops no URL from the schedule. A second
 * copy a lease lets through is not fetched (RevisitHooks.begin).
 */
export const REVISIT_LEASE_MS = 600_000;
/** Longest sleep between looks at the schedule (the wheel's narrow slots are 1 s). */
const MAX_SLEEP_MS = 1_000;
const MIN_SLEEP_MS = 100;

/**
 * Each worker moves due URLs from the revisit schedule into their groups'
 * backlogs on a loop; from there they take the same path as new URLs (the
 * release step, the gate, robots.txt, shards). Every worker does it: a pop
 * is atomic, so the fleet needs no leader. Idle (one config read a second)
 * while the crawl's revisit policy is off.
 */
export class RevisitReleaser {
  readonly #stop = new AbortController();
  readonly #done: Promise<void>;

  constructor(options: {
    readonly frontier: () => Frontier;
    readonly config: () => CrawlqConfig;
    /** URLs went to the backlogs: release them soon. */
    readonly onReleased: (count: number) => void;
    readonly onError: (error: unknown) => void;
  }) {
    this.#done = this.#run(options);
  }

  async #run(options: ConstructorParameters<typeof RevisitReleaser>[0]): Promise<void> {
    const { signal } = this.#stop;
    while (!signal.aborted) {
      let waitMs = MAX_SLEEP_MS;
      if (isContinuous(options.config())) {
        try {
          const { released, nextInMs } = await options.frontier().revisits.release({ now: Date.now(), leaseMs: REVISIT_LEASE_MS });
          if (released > 0) options.onReleased(released);
          waitMs = released > 0 ? MIN_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(MIN_SLEEP_MS, nextInMs ?? MAX_SLEEP_MS));
        } catch (error) {
          options.onError(error);
        }
      }
      // Spread over the fleet's workers, which all look.
      await sleep(waitMs * (0.75 + 0.5 * Math.random()), undefined, { signal }).catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }
}

/** A crawl with any revisit policy on (the fleet's, or a limit rule's) never ends by itself. */
export function isContinuous(config: Pick<CrawlqConfig, 'revisit' | 'limitRules'>): boolean {
  return config.revisit !== 'off';
}
