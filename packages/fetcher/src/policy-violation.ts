import { PolicyViolation } from './errors.js';

/** The first {@link PolicyViolation} in `error`'s `cause` chain, if any. */
export function findPolicyViolation(error: unknown): PolicyViolation | undefined {
  let current: unknown = error;
  // Bounded walk: cause chains are short, and a cycle must not hang us.
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof PolicyViolation) return current;
    current = current.cause;
  }
  return undefined;
}
