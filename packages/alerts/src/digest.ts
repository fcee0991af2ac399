/** One example event in a digest. */
export interface DigestExample {
  readonly id: string;
  /** Already redacted (no userinfo, no secret query values). */
  readonly url: string;
  readonly group: string;
  readonly reason: string;
  readonly status: number | null;
}

/**
 * What one alert e-mail reports: the dead-letter events accumulated since the
 * previous digest. Stored in the digest job's data before sending, so a retry
 * sends the same digest.
 */
export interface Digest {
  /** The digest job id (`digest-<n>`). */
  readonly id: string;
  readonly namespace: string;
  readonly total: number;
  readonly byGroup: Readonly<Record<string, number>>;
  readonly byReason: Readonly<Record<string, number>>;
  /** Up to {@link MAX_DIGEST_EXAMPLES}, the first ones of the period. */
  readonly examples: readonly DigestExample[];
  /** ISO time of the earliest and latest final failure in the digest. */
  readonly firstAt: string;
  readonly lastAt: string;
  /** ISO time the digest was cut (its events taken out of the pending set). */
  readonly takenAt: string;
}

/** Example URLs kept per digest. */
export const MAX_DIGEST_EXAMPLES = 10;

/** Builds a digest from the taken hash (flat HGETALL reply) and examples list. */
export function digestFromTaken(input: { id: string; namespace: string; fields: readonly string[]; examples: readonly string[] }): Digest {
  const byGroup: Record<string, number> = {};
  const byReason: Record<string, number> = {};
  let total = 0;
  let firstAt = 0;
  let lastAt = 0;
  let takenAt = 0;
  for (let index = 0; index + 1 < input.fields.length; index += 2) {
    const field = input.fields[index] ?? '';
    const value = Number(input.fields[index + 1]);
    if (field.startsWith('g:')) byGroup[field.slice(2)] = value;
    else if (field.startsWith('r:')) byReason[field.slice(2)] = value;
    else if (field === 'total') total = value;
    else if (field === 'firstAt') firstAt = value;
    else if (field === 'lastAt') lastAt = value;
    else if (field === 'takenAt') takenAt = value;
  }
  const examples = input.examples.flatMap((raw) => {
    try {
      const parsed = JSON.parse(raw) as DigestExample;
      return typeof parsed.url === 'string' ? [parsed] : [];
    } catch {
      return []; // A malformed example must not stop the digest.
    }
  });
  const iso = (ms: number) => new Date(ms || takenAt || Date.now()).toISOString();
  return { id: input.id, namespace: input.namespace, total, byGroup, byReason, examples, firstAt: iso(firstAt), lastAt: iso(lastAt), takenAt: iso(takenAt) };
}
