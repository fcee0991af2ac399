import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, type Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import nodeWarc from 'node-warc';
import { WARCParser } from 'warcio';
import { checkWarcFile, type CheckedWarcRecord } from './warc-check.js';

/** A record as one reader listed it: enough to compare readers record by record. */
interface Listed {
  readonly type: string;
  readonly id: string;
  readonly target: string;
}

/**
 * Reads a `.warc.gz` (or a slice of one) with three readers that share no
 * code: {@link checkWarcFile} (member by member, strict about gzip trailers
 * and Content-Length), warcio (the Webrecorder library) and node-warc (a
 * line-based parser behind a plain gunzip stream). Throws unless each reads it
 * without error and all three list the same records in the same order (type,
 * record id, target URI); returns the strict reader's records.
 */
export async function readWarcWithAllReaders(bytes: Buffer, what = 'WARC data'): Promise<CheckedWarcRecord[]> {
  let strict: CheckedWarcRecord[];
  try {
    strict = checkWarcFile(bytes);
  } catch (error) {
    throw new Error(`${what}: the strict reader could not read it: ${String(error)}`, { cause: error });
  }
  const expected = strict.map((record) => ({ type: record.headers['warc-type'] ?? '', id: record.headers['warc-record-id'] ?? '', target: record.headers['warc-target-uri'] ?? '' }));
  const readers: [string, () => Promise<Listed[]>][] = [
    ['warcio', () => listWithWarcio(bytes)],
    ['node-warc', () => listWithNodeWarc(bytes)],
  ];
  for (const [name, list] of readers) {
    let listed: Listed[];
    try {
      listed = await list();
    } catch (error) {
      throw new Error(`${what}: ${name} could not read it: ${String(error)}`, { cause: error });
    }
    if (JSON.stringify(listed) !== JSON.stringify(expected)) {
      throw new Error(`${what}: ${name} read ${listed.length} record(s) ${JSON.stringify(listed.slice(0, 3))}…, the strict reader ${expected.length} ${JSON.stringify(expected.slice(0, 3))}…`);
    }
  }
  return strict;
}

async function listWithWarcio(bytes: Buffer): Promise<Listed[]> {
  const listed: Listed[] = [];
  for await (const record of new WARCParser(new Blob([new Uint8Array(bytes)]).stream())) {
    // Read to the end: a record cut short fails here.
    await record.readFully();
    listed.push({ type: record.warcType ?? '', id: record.warcHeaders.headers.get('WARC-Record-ID') ?? '', target: record.warcTargetURI ?? '' });
  }
  return listed;
}

type NodeWarcRecord = InstanceType<typeof nodeWarc.WARCRecord>;

interface NodeWarcTransformInternals {
  buffered: Buffer | undefined;
  _consumeChunk(chunk: Buffer, done: (error?: Error | null) => void, pushLast: boolean): void;
}

/**
 * node-warc's transform, parsing untouched, but for its end: its `_flush`
 * calls back twice whenever input remains buffered (an empty tail after the
 * last CRLF is enough), which current Node streams reject with
 * ERR_MULTIPLE_CALLBACK. This one hands the tail over once.
 */
class WholeFlushTransform extends nodeWarc.WARCStreamTransform {
  override _flush(done: (error?: Error | null) => void): void {
    const self = this as unknown as NodeWarcTransformInternals;
    self._consumeChunk(self.buffered ?? Buffer.alloc(0), done, true);
  }
}

async function listWithNodeWarc(bytes: Buffer): Promise<Listed[]> {
  const listed: Listed[] = [];
  // node-warc's own file parsers pipe without passing gunzip errors on; a pipeline does.
  const parser: Duplex = new WholeFlushTransform();
  await pipeline(Readable.from([bytes]), createGunzip(), parser, async (records: AsyncIterable<NodeWarcRecord>) => {
    for await (const record of records) listed.push({ type: record.warcType, id: record.warcRecordID, target: record.warcTargetURI ?? '' });
  });
  return listed;
}

/** Where a page record says its WARC records are. */
export interface WarcPointer {
  readonly file: string;
  readonly offset: number;
  readonly length: number;
}

/**
 * Resolves a page record's WARC pointer: the file must exist under its closed
 * name (no `.open`), and the bytes at offset..offset+length must be its
 * response and request records, read alike by all three readers. Returns the
 * two records (response first).
 */
export async function resolveWarcPointer(dir: string, pointer: WarcPointer): Promise<CheckedWarcRecord[]> {
  const path = join(dir, pointer.file);
  if (!existsSync(path)) throw new Error(`${pointer.file} does not exist${existsSync(`${path}.open`) ? ' (only its .open file does)' : ''}`);
  const slice = readFileSync(path).subarray(pointer.offset, pointer.offset + pointer.length);
  const records = await readWarcWithAllReaders(slice, `${pointer.file} at ${pointer.offset}+${pointer.length}`);
  const types = records.map((record) => record.headers['warc-type']);
  if (types.join() !== 'response,request') throw new Error(`${pointer.file} at ${pointer.offset}: records ${types.join()}, not response,request`);
  return records;
}
