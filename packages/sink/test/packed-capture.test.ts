import { describe, expect, it } from 'vitest';
import { newWarcRecordId, packCapture, unpackCapture, warcCaptureOf } from '../src/index.js';

// A capture packed for the crawler's revisit schedule, which keeps it per URL
// in a Redis hash that must stay compact: 54 bytes in the usual case, and
// read back as the capture a revisit record names.

const PAGE = 'https://x.test/a';

function capture(url: string) {
  const response = { httpVersion: '1.1', status: 200, statusText: 'OK', headers: [], body: Buffer.from('<title>a</title>') };
  return warcCaptureOf({ url, requestedAt: new Date('2024-05-06T07:08:09.123Z'), response, recordId: newWarcRecordId() });
}

describe('packCapture', () => {
  it('keeps a capture of the URL itself in 54 bytes, and gives it back whole', () => {
    const original = capture(PAGE);
    const packed = packCapture(original, PAGE);
    expect(packed).toHaveLength(54);
    expect(unpackCapture(packed, PAGE)).toEqual(original);
  });

  it('appends a target URI that is not the URL', () => {
    const original = capture('https://x.test/b');
    const packed = packCapture(original, PAGE);
    expect(packed).toHaveLength(54 + original.targetUri.length);
    expect(unpackCapture(packed, PAGE)).toEqual(original);
  });

  it('packs nothing not in the writer\'s own form, and reads nothing from too few bytes', () => {
    expect(packCapture({ ...capture(PAGE), recordId: '<urn:x:1>' }, PAGE)).toBeUndefined();
    expect(packCapture({ ...capture(PAGE), payloadDigest: 'sha1:abc' }, PAGE)).toBeUndefined();
    expect(packCapture({ ...capture(PAGE), date: '2024-05-06T07:08:09Z' }, PAGE)).toBeUndefined();
    expect(unpackCapture(undefined, PAGE)).toBeUndefined();
    expect(unpackCapture(new Uint8Array(53), PAGE)).toBeUndefined();
  });
});
