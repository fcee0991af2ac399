import { describe, expect, it } from 'vitest';
import { addEnqueueCounts, emptyEnqueueCounts, type AddResult, type EnqueueTotals } from '../src/index.js';

const batch: AddResult = {
  accepted: 3,
  duplicate: 2,
  outOfScope: 4,
  tooDeep: 0,
  overLimit: 1,
  rejected: [{ index: 0, input: 'x', reason: 'malformed', message: 'bad' }],
  acceptedUrls: [],
};

describe('addEnqueueCounts', () => {
  it("adds a frontier batch, counting its rejected URLs, and leaves other fields alone", () => {
    const totals: EnqueueTotals = { ...emptyEnqueueCounts(), lines: 7 };
    expect(addEnqueueCounts(addEnqueueCounts(totals, batch), batch)).toBe(totals);
    expect(totals).toEqual({ accepted: 6, duplicate: 4, rejected: 2, overLimit: 2, lines: 7 });
  });

  it('adds counts, and nothing for the fields a part lacks (sitemap seeding has no rejected)', () => {
    const sum = addEnqueueCounts(emptyEnqueueCounts(), { accepted: 1, duplicate: 1, rejected: 5, overLimit: 0 });
    addEnqueueCounts(sum, { accepted: 2, duplicate: 0, overLimit: 3 });
    expect(sum).toEqual({ accepted: 3, duplicate: 1, rejected: 5, overLimit: 3 });
  });
});
