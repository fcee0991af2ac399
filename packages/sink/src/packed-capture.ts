import type { WarcCapture } from './warc-writer.js';

/** Record id (UUID) 16 bytes, date 6 (ms since 1970), SHA-256 payload digest 32; then the target URI when it is not the URL's own. */
const FIXED_BYTES = 54;
const RECORD_ID = /^<urn:uuid:([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})>$/i;
const DIGEST = /^sha256:([0-9a-f]{64})$/i;

/**
 * A page's archived response packed for a caller that keeps it per URL (the
 * crawler's revisit schedule, in a Redis hash that must stay compact): 54
 * bytes when its target URI is the URL itself, the usual case. undefined when
 * the capture is not in the writer's own form (then no revisit record can
 * name it, and the next unchanged fetch is archived in full).
 */
export function packCapture(capture: WarcCapture, url: string): Buffer | undefined {
  const id = RECORD_ID.exec(capture.recordId);
  const digest = DIGEST.exec(capture.payloadDigest);
  const date = Date.parse(capture.date);
  if (id === null || digest === null || Number.isNaN(date) || new Date(date).toISOString() !== capture.date) return undefined;
  const fixed = Buffer.alloc(FIXED_BYTES);
  Buffer.from(id.slice(1).join(''), 'hex').copy(fixed, 0);
  fixed.writeUIntBE(date, 16, 6);
  Buffer.from(digest[1] ?? '', 'hex').copy(fixed, 22);
  return capture.targetUri === url ? fixed : Buffer.concat([fixed, Buffer.from(capture.targetUri)]);
}

/** The capture packCapture stored for `url`; undefined when there is none (or it is not one). */
export function unpackCapture(packed: Uint8Array | undefined, url: string): WarcCapture | undefined {
  if (packed === undefined || packed.length < FIXED_BYTES) return undefined;
  const bytes = Buffer.from(packed);
  const hex = bytes.subarray(0, 16).toString('hex');
  const recordId = `<urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}>`;
  const date = new Date(bytes.readUIntBE(16, 6)).toISOString();
  const payloadDigest = `sha256:${bytes.subarray(22, FIXED_BYTES).toString('hex')}`;
  const tail = bytes.subarray(FIXED_BYTES);
  return { recordId, date, targetUri: tail.length > 0 ? tail.toString() : url, payloadDigest };
}
