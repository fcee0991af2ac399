import { setTimeout as sleep } from 'node:timers/promises';

/** How {@link waitFor} polls. */
export interface WaitForOptions {
  /** What is waited for, named in the error after the deadline; a function is asked then, so it can tell the last state seen. */
  readonly what?: string | (() => string);
  /** @default 60_000 */
  readonly timeoutMs?: number;
  /** Time between two checks: long enough that a check which starts a process or asks Redis does not load the machine. @default 200 */
  readonly intervalMs?: number;
}

/**
 * Polls `check` until it returns something other than undefined, null or
 * false, and returns that; throws naming `what` after `timeoutMs`. Tests wait
 * for a state this way instead of sleeping a guessed time, so they hold at any
 * machine speed.
 */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, options: WaitForOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) {
      const what = typeof options.what === 'function' ? options.what() : options.what;
      throw new Error(`timed out waiting for ${what ?? 'a condition'}`);
    }
    await sleep(options.intervalMs ?? 200);
  }
}
