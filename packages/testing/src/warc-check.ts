import { crc32, inflateRawSync } from 'node:zlib';

/** One WARC record as an independent reader sees it. */
export interface CheckedWarcRecord {
  /** Byte offset of the record's gzip member in the file. */
  readonly offset: number;
  /** Compressed length of the member. */
  readonly length: number;
  readonly version: string;
  /** WARC header fields, names lower-cased (repeated names: last wins). */
  readonly headers: Readonly<Record<string, string>>;
  readonly block: Buffer;
}

/**
 * A WARC reader that shares no code with the writer: walks the file one gzip
 * member at a time (RFC 1952 header, raw deflate, CRC-32 and size trailer),
 * and checks that each member holds exactly one record whose Content-Length
 * matches its block and which ends in CRLF CRLF. Throws on the first defect.
 */
export function checkWarcFile(file: Buffer): CheckedWarcRecord[] {
  const records: CheckedWarcRecord[] = [];
  let offset = 0;
  while (offset < file.length) {
    if (file[offset] !== 0x1f || file[offset + 1] !== 0x8b || file[offset + 2] !== 8) throw new Error(`no gzip member at offset ${offset}`);
    const flags = file[offset + 3] ?? 0;
    let at = offset + 10;
    if (flags & 4) at += 2 + (file.readUInt16LE(at));
    if (flags & 8) at = file.indexOf(0, at) + 1;
    if (flags & 16) at = file.indexOf(0, at) + 1;
    if (flags & 2) at += 2;
    const { buffer: data, engine } = inflateRawSync(file.subarray(at), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    const end = at + engine.bytesWritten;
    const crc = file.readUInt32LE(end);
    const size = file.readUInt32LE(end + 4);
    if (crc !== crc32(data)) throw new Error(`CRC mismatch in the member at ${offset}`);
    if (size !== data.length % 2 ** 32) throw new Error(`size mismatch in the member at ${offset}`);
    records.push({ offset, length: end + 8 - offset, ...parseRecord(data, offset) });
    offset = end + 8;
  }
  return records;
}

function parseRecord(data: Buffer, offset: number): Omit<CheckedWarcRecord, 'offset' | 'length'> {
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`record at ${offset}: no end of the header block`);
  const lines = data.subarray(0, split).toString('utf8').split('\r\n');
  const version = lines.shift() ?? '';
  if (!/^WARC\/1\.[01]$/.test(version)) throw new Error(`record at ${offset}: bad version line ${JSON.stringify(version)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`record at ${offset}: bad header line ${JSON.stringify(line)}`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length']);
  if (!Number.isInteger(length)) throw new Error(`record at ${offset}: no Content-Length`);
  const block = data.subarray(split + 4, split + 4 + length);
  if (block.length !== length) throw new Error(`record at ${offset}: block shorter than Content-Length`);
  const tail = data.subarray(split + 4 + length);
  if (tail.toString('latin1') !== '\r\n\r\n') throw new Error(`record at ${offset}: ${tail.length} unexpected bytes after the block`);
  for (const required of ['warc-type', 'warc-record-id', 'warc-date']) {
    if (headers[required] === undefined) throw new Error(`record at ${offset}: no ${required}`);
  }
  return { version, headers, block };
}
