/**
 * Polls `condition` every 10 ms until it holds, failing after 10 s. The
 * repository's wait helper lives in `@crawlq/testing`, which depends on this
 * package, so this package's own tests keep this one.
 */
export async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
