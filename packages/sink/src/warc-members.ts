import type { FileHandle } from 'node:fs/promises';
import { crc32, inflateRawSync } from 'node:zlib';

/** First read per member; doubled while a member (a large page) runs past it. */
const FIRST_WINDOW = 1024 * 1024;

/**
 * Bytes at the start of a `.warc.gz` file made of whole records: gzip members
 * (one per record, as the writer makes them) whose deflate stream, CRC-32 and
 * size trailer are complete and which hold one complete WARC record (version
 * line, header block, a block of its Content-Length, the closing CRLF CRLF).
 * A writer killed mid-write, or a disk that filled, leaves a tail past this
 * point that no reader can use; every location handed out lies before it,
 * because a page's location is returned only once its bytes were written.
 * Reads one member at a time, so a 1 GB file does not have to fit in memory.
 */
export async function completeRecordsLength(handle: FileHandle): Promise<number> {
  const { size } = await handle.stat();
  let offset = 0;
  let window = FIRST_WINDOW;
  while (offset < size) {
    const length = Math.min(window, size - offset);
    const bytes = Buffer.alloc(length);
    const { bytesRead } = await handle.read(bytes, 0, length, offset);
    const member = wholeMember(bytes.subarray(0, bytesRead));
    if (member === 'short' && length < size - offset) {
      window *= 2;
      continue;
    }
    if (typeof member !== 'number') break;
    offset += member;
    window = FIRST_WINDOW;
  }
  return offset;
}

/** Length of the complete member at the start of `bytes`; `short` when it may go on past them, `bad` when it is broken. */
function wholeMember(bytes: Buffer): number | 'short' | 'bad' {
  if (bytes.length < 18) return 'short';
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b || bytes[2] !== 8) return 'bad';
  const flags = bytes[3] ?? 0;
  let at = 10;
  if (flags & 4) at += 2 + bytes.readUInt16LE(at);
  if (flags & 8) at = bytes.indexOf(0, at) + 1;
  if (flags & 16) at = bytes.indexOf(0, at) + 1;
  if (flags & 2) at += 2;
  if (at <= 0 || at > bytes.length) return 'short';
  let data: Buffer;
  let consumed: number;
  try {
    const inflated = inflateRawSync(bytes.subarray(at), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    data = inflated.buffer;
    consumed = inflated.engine.bytesWritten;
  } catch (error) {
    // zlib says "unexpected end of file" for a deflate stream cut short.
    return (error as { code?: string }).code === 'Z_BUF_ERROR' ? 'short' : 'bad';
  }
  const end = at + consumed;
  if (end + 8 > bytes.length) return 'short';
  if (bytes.readUInt32LE(end) !== crc32(data) || bytes.readUInt32LE(end + 4) !== data.length % 2 ** 32) return 'bad';
  return isWholeRecord(data) ? end + 8 : 'bad';
}

function isWholeRecord(data: Buffer): boolean {
  if (!data.subarray(0, 7).equals(Buffer.from('WARC/1.'))) return false;
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) return false;
  const declared = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i.exec(data.subarray(0, split).toString('latin1'))?.[1];
  if (declared === undefined) return false;
  const blockEnd = split + 4 + Number(declared);
  return data.length === blockEnd + 4 && data.subarray(blockEnd).toString('latin1') === '\r\n\r\n';
}
