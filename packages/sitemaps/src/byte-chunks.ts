/** Bytes as the parsers consume them: at most this many per chunk, so one chunk yields a bounded number of entries. */
export const MAX_CHUNK_BYTES = 16 * 1024;

/** A stream of bytes or text, as a `NodeJS.ReadableStream` or any async iterable yields it. */
export type ByteSource = AsyncIterable<Uint8Array | string>;

/**
 * Turns a source of strings, Buffers or Uint8Arrays into Buffers of at most
 * {@link MAX_CHUNK_BYTES}. Pulls one chunk at a time: nothing is read ahead.
 */
export async function* byteChunks(source: ByteSource): AsyncGenerator<Buffer, void, undefined> {
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let offset = 0; offset < bytes.length; offset += MAX_CHUNK_BYTES) {
      yield bytes.subarray(offset, offset + MAX_CHUNK_BYTES);
    }
  }
}
