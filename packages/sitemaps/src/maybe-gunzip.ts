import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { MAX_CHUNK_BYTES } from './byte-chunks.js';

/**
 * Passes bytes through, or gunzips them when they start with the gzip magic
 * bytes `1f 8b`: sitemaps named `.gz`, and servers that send gzip without
 * `Content-Encoding`, both look like that. The name is not trusted: a `.gz`
 * URL whose server already decoded it is plain XML.
 *
 * Streams with backpressure (the gunzip stream is pulled as the consumer
 * pulls). Returning early closes the source.
 */
export async function* maybeGunzip(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    let head: Buffer = Buffer.alloc(0);
    while (head.length < 2) {
      const next = await iterator.next();
      if (next.done === true) break;
      head = head.length === 0 ? next.value : Buffer.concat([head, next.value]);
    }
    const rest = resume(head, iterator);
    if (head[0] !== 0x1f || head[1] !== 0x8b) {
      yield* rest;
      return;
    }
    const input = Readable.from(rest, { objectMode: false, highWaterMark: MAX_CHUNK_BYTES });
    // Errors (corrupt data, source failures) destroy the gunzip stream, and the
    // loop below rethrows them; the callback has nothing left to do.
    const gunzip = pipeline(input, createGunzip({ chunkSize: MAX_CHUNK_BYTES }), () => undefined);
    for await (const chunk of gunzip) yield chunk as Buffer;
  } finally {
    // Idempotent: a finished or already closed iterator ignores it.
    await iterator.return?.();
  }
}

async function* resume(head: Buffer, iterator: AsyncIterator<Buffer>): AsyncGenerator<Buffer, void, undefined> {
  if (head.length > 0) yield head;
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) return;
    yield next.value;
  }
}
