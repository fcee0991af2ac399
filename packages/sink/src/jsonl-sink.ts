import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ResultSink } from './result-sink.js';

/**
 * Appends one JSON object per line. The file is opened with O_APPEND and every
 * record is one complete line per write, so several worker processes on one
 * machine can share a file without interleaving lines.
 */
export function openJsonlSink(path: string): ResultSink {
  const file = resolve(path);
  mkdirSync(dirname(file), { recursive: true });
  const stream: WriteStream = createWriteStream(file, { flags: 'a' });
  let failure: Error | undefined;
  // One listener for the stream's life: a listener per write would pile up past
  // Node's limit of 10 under concurrent writers (and warn on every crawl).
  stream.on('error', (error) => {
    failure ??= error;
  });
  return {
    write(record) {
      if (failure) return Promise.reject(failure);
      const line = `${JSON.stringify(record)}\n`;
      // Settle when the line has reached the file (the write callback), not when it
      // is buffered: the job completes only after its record is written, and each
      // worker has at most `concurrency` lines in flight, so the buffer stays bounded.
      return new Promise<void>((resolveWrite, reject) => {
        stream.write(line, (error) => {
          // The callback can run before 'error' is emitted: keep the first cause here
          // too, so later writes report it rather than "stream destroyed".
          if (error) failure ??= error;
          if (failure) reject(failure);
          else resolveWrite();
        });
      });
    },
    close() {
      return new Promise((resolveClose, reject) => {
        if (stream.closed) return resolveClose();
        stream.end((error?: Error | null) => (error ? reject(error) : resolveClose()));
      });
    },
  };
}
