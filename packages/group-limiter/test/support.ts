import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh key prefix per test, with a hash tag like production prefixes. */
export const testPrefix = (): string => `test-{${randomUUID()}}`;

/** The largest number of `times` inside any half-open window [t, t + windowMs) that starts at one of them. */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start += 1) {
    while (end < sorted.length && sorted[end]! < sorted[start]! + windowMs) end += 1;
    best = Math.max(best, end - start);
  }
  return best;
}

/** Counts the commands (round trips) a client sends from now on. */
export function countCommands(client: Redis): { readonly count: number; reset(): void } {
  let count = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    count += 1;
    return send(...args);
  };
  return {
    get count() {
      return count;
    },
    reset() {
      count = 0;
    },
  };
}
