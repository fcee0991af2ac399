import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it returns something other than undefined, null or
 * false, and returns that; throws naming `what` after `timeoutMs`. Tests wait
 * for a state this way instead of sleeping a guessed time, so they hold at any
 * machine speed.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(options.intervalMs ?? 25);
  }
}
