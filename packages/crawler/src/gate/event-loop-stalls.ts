/**
 * How late this process's event loop is running just now.
 *
 * A response head is seen only when the event loop gets to it: in a busy
 * process, or on a machine whose cores others take, a healthy site's 5 ms
 * answer reads as 100 ms or more, and adaptive pacing would slow a site down
 * for the crawler's own slowness. A timer due every `TICK_MS` that fires late
 * measures the stall; a lease leaves the stall that delayed its response head
 * out of the latency it reports.
 *
 * Only the stall that can have delayed the head counts, not every stall
 * during the request: a stall in the middle of a site's 800 ms wait delays
 * nothing the process sees. When a stall ends, Node runs either the due timers
 * or the socket reads first, so the head's callback finds either the stall
 * still open (no tick since it began) or a tick a moment ago that closed it.
 */

/** A tick every 20 ms: 50 wake-ups a second, nothing next to a crawl's work. */
const TICK_MS = 20;
/** A tick this recent closed the stall the caller was held up by. */
const JUST_NOW_MS = 5;

export class EventLoopStalls {
  #lastTick = performance.now();
  /** How late the last tick fired past its due time. */
  #lastLateness = 0;
  #timer: NodeJS.Timeout | undefined;

  /** Starts ticking (idempotent); the timer never keeps the process alive. */
  start(): this {
    if (this.#timer) return this;
    this.#lastTick = performance.now();
    this.#lastLateness = 0;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#lastLateness = Math.max(0, now - this.#lastTick - TICK_MS);
      this.#lastTick = now;
    }, TICK_MS);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Milliseconds by which the event loop was held up just before `now` (a
   * performance.now() time): the stall still open, or the one a tick closed
   * a moment ago. 0 when not started.
   */
  stallBefore(now: number = performance.now()): number {
    if (!this.#timer) return 0;
    const sinceTick = now - this.#lastTick;
    if (sinceTick > TICK_MS) return sinceTick - TICK_MS;
    return sinceTick <= JUST_NOW_MS ? this.#lastLateness : 0;
  }
}

/** The process's one tracker, started by the first request that reports a latency. */
let shared: EventLoopStalls | undefined;
export function processEventLoopStalls(): EventLoopStalls {
  shared ??= new EventLoopStalls().start();
  return shared;
}
