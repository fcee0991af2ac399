/** Waits for `work` to settle, but no longer than `ms`: for teardown that must not wait on a Redis that is gone. */
export async function settleWithin(ms: number, work: readonly Promise<unknown>[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(work), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
